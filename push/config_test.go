package push

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigValidate (PUSH-1, PUSH-2, PUSH-6): zero values are the
// defaults and pass; each wrong value is refused by a message that states
// the rule actually checked.
func TestConfigValidate(t *testing.T) {
	var zero Config
	if err := zero.Validate(); err != nil || zero.QueueName() != QueueLocal {
		t.Fatalf("zero config: %v, queue %q", err, zero.QueueName())
	}
	redis := &RedisOptions{URL: "redis://127.0.0.1:6379/0"}
	for name, tc := range map[string]struct {
		c    Config
		want string
	}{
		"cidr":           {Config{AllowPrivateNetworks: []string{"not-a-cidr"}}, "push: allow_private_networks:"},
		"attempts":       {Config{MaxAttempts: -1}, "push: max_attempts must not be negative"},
		"configs":        {Config{MaxConfigsPerTask: -1}, "push: max_configs_per_task must not be negative"},
		"jitter":         {Config{RetryJitter: 1.5}, "push: retry_jitter must be between 0 and 1"},
		"retry order":    {Config{RetryInitial: 2 * time.Second, RetryMax: time.Second}, "push: retry_initial must not exceed retry_max"},
		"queue":          {Config{Queue: "kafka"}, `push: unknown queue "kafka" (want local-file or redis-streams)`},
		"redis no opts":  {Config{Queue: QueueRedis}, "push: queue redis-streams needs redis_url"},
		"redis no url":   {Config{Queue: QueueRedis, Redis: &RedisOptions{Stream: "s"}}, "needs redis_url"},
		"negative lease": {Config{Queue: QueueRedis, Redis: &RedisOptions{URL: redis.URL, Lease: -time.Millisecond}}, "push: lease_timeout_ms must not be negative"},
	} {
		err := tc.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
		if _, serr := tc.c.Settings(); serr == nil {
			t.Errorf("%s: Settings accepted what Validate refuses", name)
		}
	}
	ok := Config{Queue: QueueRedis, Redis: redis, AllowPrivateNetworks: []string{"127.0.0.0/8, 10.0.0.0/8"},
		Timeout: 2 * time.Second, MaxAttempts: 3, RetryInitial: 100 * time.Millisecond, RetryMax: time.Second, RetryJitter: 0.1}
	s, err := ok.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.Timeout != 2*time.Second || s.Retry.MaxAttempts != 3 || s.Retry.Initial != 100*time.Millisecond ||
		s.Retry.Max != time.Second || s.Retry.Jitter != 0.1 || s.Policy == nil || len(s.Policy.Allow) != 2 {
		t.Fatalf("settings %+v", s)
	}
}

// TestLoadKeyRing (PUSH-3): the data directory's push.keys is created
// 0600 and read back; A2A_PUSH_KEYRING, when set, wins and is read-only.
func TestLoadKeyRing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(KeyRingEnv, "")
	kr, err := LoadKeyRing(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "push.keys"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("push.keys: %v %v", fi, err)
	}
	again, err := LoadKeyRing(dir)
	if err != nil || again.ActiveKeyID() != kr.ActiveKeyID() {
		t.Fatalf("reload: %v, key %q want %q", err, again.ActiveKeyID(), kr.ActiveKeyID())
	}
	text, _ := os.ReadFile(filepath.Join(dir, "push.keys"))
	t.Setenv(KeyRingEnv, string(text))
	env, err := LoadKeyRing(t.TempDir())
	if err != nil || env.ActiveKeyID() != kr.ActiveKeyID() {
		t.Fatalf("from env: %v", err)
	}
	if _, err := env.Rotate(); err == nil {
		t.Fatal("the environment's key ring rotated")
	}
	t.Setenv(KeyRingEnv, "nope")
	if _, err := LoadKeyRing(dir); err == nil || !strings.Contains(err.Error(), KeyRingEnv) {
		t.Fatalf("bad env ring: %v", err)
	}
}
