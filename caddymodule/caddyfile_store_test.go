package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// adaptApp adapts a Caddyfile whose global block is global and returns the
// a2a app's JSON, or the adapt error.
func adaptApp(t *testing.T, global string) (map[string]any, error) {
	t.Helper()
	src := "{\n\tadmin off\n" + global + "\n}\nhttp://127.0.0.1:9999 {\n\ta2a {\n\t\tcard {\n\t\t\tname x\n\t\t}\n\t}\n}\n"
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(src), nil)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Apps map[string]map[string]any `json:"apps"`
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Apps["a2a"], nil
}

// TestAdaptStoreRedis (SCALE-1, Appendix B.1): the block and one-line
// forms of `store redis` adapt to the app's store and redis fields.
func TestAdaptStoreRedis(t *testing.T) {
	app, err := adaptApp(t, `	a2a {
		data_dir ./d
		store redis {
			url redis://127.0.0.1:6379/0
			url redis://10.0.0.2:6379 redis://10.0.0.3:6379
			key_prefix gw:
			max_shared_blob_bytes 1048576
			instance_lease 5s
			event_log_ttl 1h
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if app["store"] != "redis" {
		t.Fatalf("store: %v", app)
	}
	r, _ := app["redis"].(map[string]any)
	urls, _ := r["urls"].([]any)
	if len(urls) != 3 || urls[0] != "redis://127.0.0.1:6379/0" || urls[2] != "redis://10.0.0.3:6379" || r["key_prefix"] != "gw:" || r["max_shared_blob_bytes"] != 1048576.0 || r["instance_lease"] != 5e9 || r["event_log_ttl"] != 3.6e12 {
		t.Fatalf("redis: %v", r)
	}

	app, err = adaptApp(t, "\ta2a {\n\t\tstore redis redis+sentinel://s1:26379,s2:26379/mymaster/0\n\t}")
	if err != nil {
		t.Fatal(err)
	}
	r, _ = app["redis"].(map[string]any)
	if app["store"] != "redis" || r["urls"].([]any)[0] != "redis+sentinel://s1:26379,s2:26379/mymaster/0" {
		t.Fatalf("one-line form: %v", app)
	}

	app, err = adaptApp(t, "\ta2a {\n\t\tstore redis redis://x {\n\t\t\tevent_log_ttl off\n\t\t}\n\t}")
	if r, _ = app["redis"].(map[string]any); err != nil || r["event_log_ttl"] != -1.0 {
		t.Fatalf("event_log_ttl off: %v %v", r, err)
	}

	app, err = adaptApp(t, "\ta2a {\n\t\tstore sqlite\n\t}")
	if err != nil || app["store"] != "sqlite" || app["redis"] != nil {
		t.Fatalf("store sqlite: %v %v", app, err)
	}

	for src, want := range map[string]string{
		"store redis":                                                        "url is required",
		"store redis {\n\t\tkey_prefix x\n\t\t}":                             "url is required",
		"store memcached":                                                    "unknown store",
		"store redis redis://x {\n\t\tbogus 1\n\t\t}":                        `unknown option "bogus"`,
		"store redis redis://x {\n\t\tkey_prefix\n\t\t}":                     "key_prefix takes exactly one value",
		"store redis redis://x {\n\t\tmax_shared_blob_bytes -1\n\t\t}":       "max_shared_blob_bytes must not be negative",
		"store redis redis://x {\n\t\tkey_prefix a\n\t\tkey_prefix b\n\t\t}": "duplicate key_prefix",
		"store redis redis://x {\n\t\tinstance_lease 500ms\n\t\t}":           "instance_lease must be at least 1s",
		"store sqlite extra":                                                 "takes no more values",
		"store redis redis://x {\n\t\tevent_log_ttl soon\n\t\t}":             `event_log_ttl: invalid duration "soon"`,
	} {
		_, err := adaptApp(t, "\ta2a {\n\t\t"+src+"\n\t}")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// TestStoreRedisValidate: the JSON form is checked at provisioning.
func TestStoreRedisValidate(t *testing.T) {
	for _, tc := range []struct {
		app  App
		want string
	}{
		{App{Store: "redis"}, "url is required"},
		{App{Store: "redis", Redis: &StoreRedis{URLs: []string{"redis://x"}, MaxSharedBlobBytes: -1}}, "must not be negative"},
		{App{Store: "etcd"}, "unknown store"},
	} {
		if err := tc.app.validateStore(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.app, err, tc.want)
		}
	}
	ok := App{Store: "redis", Redis: &StoreRedis{URLs: []string{"redis://x"}}}
	if err := ok.validateStore(); err != nil {
		t.Fatal(err)
	}
	if ok.sharedKey("/d") == "/d" || (&App{Store: "sqlite"}).sharedKey("/d") != "/d" {
		t.Fatal("shared state keys")
	}
}
