package tests

import (
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// adaptA2A runs `caddy adapt --validate` on a site whose a2a block (with
// a card named x) holds site, and returns the output (JSON quotes
// unescaped) and the exit error.
func adaptA2A(t *testing.T, site string) (string, error) {
	t.Helper()
	out, err := harness.Adapt(t, "http://127.0.0.1:1 {\na2a {\ncard {\nname x\n}\n"+site+"\n}\n}\n", "--validate")
	return strings.ReplaceAll(out, `\"`, `"`), err
}

// The Caddyfile options of the backends and input limits adapt to the
// documented JSON fields, and bad values are refused with a clear error.
func TestBackendsAdaptOptions(t *testing.T) {
	t.Parallel()
	adapt := func(site string) (string, error) { return adaptA2A(t, site) }
	out, err := adapt(`backend exec /bin/true a b {
	env K V
	mode per_context
	timeout 1m
	grace_period 2s
	max_line_size 1MiB
	max_output_size 2MiB
	max_stderr_log 1KiB
}
artifact_urls file
max_artifact_size 3MiB
max_text_part_size 2KB
max_inline_part_size 4MiB
max_file_part_size 8MiB
text_media_types application/hcl
attachment_media_types image/* application/pdf`)
	if err != nil {
		t.Fatalf("adapt: %v\n%s", err, out)
	}
	for _, want := range []string{`"backend":"exec"`, `"command":["/bin/true","a","b"]`, `"env":{"K":"V"}`, `"mode":"per_context"`, `"timeout":60000000000`,
		`"grace_period":2000000000`, `"max_line_size":1048576`, `"max_output_size":2097152`, `"max_stderr_log":1024`, `"artifact_urls":"file"`,
		`"max_artifact_size":3145728`, `"max_text_part_size":2000`, `"max_inline_part_size":4194304`, `"max_file_part_size":8388608`,
		`"text_media_types":["application/hcl"]`, `"attachment_media_types":["image/*","application/pdf"]`} {
		if !strings.Contains(out, want) {
			t.Errorf("adapted JSON lacks %s:\n%s", want, out)
		}
	}
	out, err = adapt(`backend http http://127.0.0.1:9/turn {
	header X-Key {env.K}
	transport http {
		dial_timeout 2s
	}
	timeout 30s
}`)
	if err != nil || !strings.Contains(out, `"backend":"http"`) || !strings.Contains(out, `"url":"http://127.0.0.1:9/turn"`) || !strings.Contains(out, `"headers":{"X-Key":["{env.K}"]}`) || !strings.Contains(out, `"transport":{"dial_timeout":2000000000,"protocol":"http"}`) {
		t.Errorf("http backend adapt: %v\n%s", err, out)
	}
	out, err = adapt(`backend openai http://127.0.0.1:9/v1 {
	model m
	api_key {env.OPENAI_API_KEY}
	max_messages 10
	max_chars 5000
	vision
	temperature 0.2
}`)
	if err != nil || !strings.Contains(out, `"base_url":"http://127.0.0.1:9/v1"`) || !strings.Contains(out, `"api_key":"{env.OPENAI_API_KEY}"`) || !strings.Contains(out, `"vision":true`) || !strings.Contains(out, `"temperature":0.2`) {
		t.Errorf("openai backend adapt: %v\n%s", err, out)
	}
	for _, tc := range []struct{ site, want string }{
		{"backend exec", "a command is required"},
		{"backend exec /bin/true {\nmode forever\n}", "mode must be per_turn or per_context"},
		{"backend exec /bin/true {\nformat text\nmode per_context\n}", "format text needs mode per_turn"},
		{"backend exec /bin/true {\nbogus 1\n}", `unknown option "bogus"`},
		{"backend http ftp://x/", "absolute http(s) URL"},
		{"backend openai http://h/v1", "model is required"},
		{"backend openai http://h/v1 {\nmodel m\ntemperature 9\n}", "temperature must be"},
		{"artifact_urls s3", "artifact_urls: must be http or file"},
		{"max_text_part_size lots", "invalid size"},
	} {
		out, err := adapt(tc.site)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("%q: err=%v, want %q in:\n%s", tc.site, err, tc.want, out)
		}
	}
}
