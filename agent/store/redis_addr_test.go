package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// OPS-9: a message names Redis without user, password or query.
func TestRedisAddressDropsCredentials(t *testing.T) {
	got := RedisAddress([]string{
		"redis://user:s3cret@127.0.0.1:6379/0",
		"redis+sentinel://u:s3cret@s1:26379,s2:26379/mymaster?sentinel_password=s3cret",
		"unix://:s3cret@/run/redis.sock?db=2",
		"redis://:pa/ss@host:1/0",
	})
	want := "redis://127.0.0.1:6379/0, redis+sentinel://s1:26379,s2:26379/mymaster, unix:///run/redis.sock, (invalid URL)"
	if got != want {
		t.Fatalf("RedisAddress = %q, want %q", got, want)
	}
}

// OPS-9: a Redis that cannot be reached at start is one error naming its
// address (credential-free) and the reason.
func TestOpenRedisUnreachableNamesAddress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := OpenRedis(ctx, RedisOptions{URLs: []string{"redis://user:s3cret@127.0.0.1:1/0"}, NoInstance: true})
	if err == nil {
		t.Fatal("OpenRedis on a closed port succeeded")
	}
	msg := err.Error()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(msg, "redis://127.0.0.1:1/0") ||
		!strings.Contains(msg, "connection refused") || strings.Contains(msg, "s3cret") || strings.Contains(msg, "user") {
		t.Fatalf("OpenRedis error = %q, want ErrUnavailable naming redis://127.0.0.1:1/0 and the reason, without credentials", msg)
	}
}
