package redisstream

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestConsumerName: host name, "-", pid.
func TestConsumerName(t *testing.T) {
	name := ConsumerName()
	if !strings.HasSuffix(name, "-"+strconv.Itoa(os.Getpid())) || strings.HasPrefix(name, "-") {
		t.Fatalf("ConsumerName() = %q", name)
	}
}

// TestShortErr: a long text is cut to 200 bytes; a short one is kept.
func TestShortErr(t *testing.T) {
	if got := ShortErr(errors.New("ERR short")).Error(); got != "ERR short" {
		t.Fatalf("short: %q", got)
	}
	long := strings.Repeat("x", 300)
	if got := ShortErr(errors.New(long)).Error(); got != long[:200] {
		t.Fatalf("long: %d bytes", len(got))
	}
}
