package agent

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// Tests of INPUT-1..4: part rules, limits (each limit at -1, =, +1), the
// manifest, and an attack corpus for workspaces and file URLs.

type inputFixture struct {
	base, ws, other, outside string
	wsp                      *Workspace
}

func newInputFixture(t *testing.T) inputFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(root, "allowed")
	f := inputFixture{base: base, ws: filepath.Join(base, "ws"), other: filepath.Join(base, "other"), outside: filepath.Join(root, "outside")}
	for _, d := range []string{f.ws, filepath.Join(f.ws, "sub"), f.other, f.outside, base + "/ws-evil"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.ws, "doc.txt"), "hello from a file")
	write(filepath.Join(f.ws, "sub", "n.md"), "# nested")
	write(filepath.Join(f.ws, "bin.txt"), "\xff\xfe\x00bad")
	write(filepath.Join(f.ws, "pic.png"), "\x89PNG fake")
	write(filepath.Join(f.ws, "tool.exe"), "MZ")
	write(filepath.Join(f.other, "doc.txt"), "other workspace")
	write(filepath.Join(f.outside, "secret.txt"), "top secret")
	write(filepath.Join(base, "ws-evil", "doc.txt"), "sibling")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.ws, "link-out.txt")))
	must(os.Symlink(f.outside, filepath.Join(f.ws, "dir-out")))
	must(os.Symlink(filepath.Join(f.ws, "doc.txt"), filepath.Join(f.ws, "link-in.txt")))
	must(os.Symlink(filepath.Join(f.ws, "link-in.txt"), filepath.Join(f.ws, "link-chain.txt")))
	must(os.Symlink("/dev/zero", filepath.Join(f.ws, "zero.txt")))
	must(syscall.Mkfifo(filepath.Join(f.ws, "fifo.txt"), 0o600))
	f.wsp = NewWorkspace(f.ws, []string{base})
	return f
}

func urlMessage(u, mediaType string) *a2a.Message {
	return &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("look:"), {URL: u, MediaType: mediaType}}}
}

func wantInvalid(t *testing.T, err error, part string) {
	t.Helper()
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
		t.Fatalf("err = %v, want InvalidParams", err)
	}
	if !strings.Contains(ae.Message, part) {
		t.Errorf("error %q does not name %s", ae.Message, part)
	}
}

func TestInputFileURLAttackCorpus(t *testing.T) {
	f := newInputFixture(t)
	ws := f.ws
	cases := []struct {
		name, url, mediaType string
		cwd                  string // "" = f.ws; "-" = invalid workspace
		code                 int    // 0 = accepted
	}{
		{"absolute outside", "file://" + f.outside + "/secret.txt", "", "", a2a.CodeInvalidParams},
		{"etc passwd", "file:///etc/passwd", "", "", a2a.CodeInvalidParams},
		{"remote host", "file://evil.example.com" + ws + "/doc.txt", "", "", a2a.CodeInvalidParams},
		{"ip host", "file://127.0.0.1" + ws + "/doc.txt", "", "", a2a.CodeInvalidParams},
		{"dotdot", "file://" + ws + "/../outside/secret.txt", "", "", a2a.CodeInvalidParams},
		{"dotdot staying inside", "file://" + ws + "/sub/../doc.txt", "", "", a2a.CodeInvalidParams},
		{"encoded dotdot", "file://" + ws + "/%2e%2e/%2e%2e/outside/secret.txt", "", "", a2a.CodeInvalidParams},
		{"encoded dotdot upper", "file://" + ws + "/%2E%2E/other/doc.txt", "", "", a2a.CodeInvalidParams},
		{"mixed encoded dotdot", "file://" + ws + "/.%2e/other/doc.txt", "", "", a2a.CodeInvalidParams},
		{"encoded slash", "file://" + ws + "/sub%2f..%2fdoc.txt", "", "", a2a.CodeInvalidParams},
		{"backslash", "file://" + ws + "\\..\\other\\doc.txt", "", "", a2a.CodeInvalidParams},
		{"encoded backslash", "file://" + ws + "/%5c..%5cdoc.txt", "", "", a2a.CodeInvalidParams},
		{"dot segment", "file://" + ws + "/./doc.txt", "", "", a2a.CodeInvalidParams},
		{"nul byte", "file://" + ws + "/doc.txt%00.png", "", "", a2a.CodeInvalidParams},
		{"symlink to outside file", "file://" + ws + "/link-out.txt", "", "", a2a.CodeInvalidParams},
		{"symlink dir to outside", "file://" + ws + "/dir-out/secret.txt", "", "", a2a.CodeInvalidParams},
		{"symlink to device", "file://" + ws + "/zero.txt", "", "", a2a.CodeInvalidParams},
		{"fifo", "file://" + ws + "/fifo.txt", "", "", a2a.CodeInvalidParams},
		{"directory", "file://" + ws + "/sub", "", "", a2a.CodeInvalidParams},
		{"missing file", "file://" + ws + "/nope.txt", "", "", a2a.CodeInvalidParams},
		{"sibling prefix dir", "file://" + f.base + "/ws-evil/doc.txt", "", "", a2a.CodeInvalidParams},
		{"allowed root but other workspace", "file://" + f.other + "/doc.txt", "", "", a2a.CodeInvalidParams},
		{"query", "file://" + ws + "/doc.txt?x=1", "", "", a2a.CodeInvalidParams},
		{"fragment", "file://" + ws + "/doc.txt#top", "", "", a2a.CodeInvalidParams},
		{"userinfo", "file://user@localhost" + ws + "/doc.txt", "", "", a2a.CodeInvalidParams},
		{"relative opaque", "file:doc.txt", "", "", a2a.CodeInvalidParams},
		{"double slash path", "file:////etc/passwd", "", "", a2a.CodeInvalidParams},
		{"http remote", "http://example.com/doc.txt", "", "", a2a.CodeInvalidParams},
		{"https remote", "https://example.com/doc.txt", "", "", a2a.CodeInvalidParams},
		{"uppercase scheme remote", "HTTPS://EXAMPLE.COM/x", "", "", a2a.CodeInvalidParams},
		{"ftp", "ftp://example.com/x", "", "", a2a.CodeInvalidParams},
		{"data url", "data:text/plain,hello", "", "", a2a.CodeInvalidParams},
		{"bare path", ws + "/doc.txt", "", "", a2a.CodeInvalidParams},
		{"invalid workspace", "file://" + ws + "/doc.txt", "", "-", a2a.CodeInvalidParams},
		{"binary text file", "file://" + ws + "/bin.txt", "", "", a2a.CodeInvalidParams},
		{"unsupported type", "file://" + ws + "/tool.exe", "application/x-msdownload", "", a2a.CodeContentTypeNotSupported},
		{"ok plain", "file://" + ws + "/doc.txt", "", "", 0},
		{"ok localhost", "file://localhost" + ws + "/doc.txt", "", "", 0},
		{"ok nested", "file://" + ws + "/sub/n.md", "text/markdown; charset=utf-8", "", 0},
		{"ok symlink inside", "file://" + ws + "/link-chain.txt", "", "", 0},
		{"ok image attachment", "file://" + ws + "/pic.png", "", "", 0},
	}
	if len(cases) < 30 {
		t.Fatalf("corpus has %d cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cwd := ws
			if tc.cwd == "-" {
				cwd = ""
			}
			in, err := buildInput(urlMessage(tc.url, tc.mediaType), InputLimits{}, cwd, f.wsp)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if !in.hasInput() {
					t.Fatal("no input")
				}
				return
			}
			var ae *a2a.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Fatalf("err = %v, want code %d", err, tc.code)
			}
			if !strings.Contains(ae.Message, "message.parts[1]") {
				t.Errorf("error %q does not name the part index", ae.Message)
			}
			for _, leak := range []string{f.outside, "secret", "top secret"} {
				if strings.Contains(ae.Message, leak) {
					t.Errorf("error %q leaks %q", ae.Message, leak)
				}
			}
		})
	}
	// The accepted text file lands in the prompt; the image in the manifest.
	in, err := buildInput(urlMessage("file://"+ws+"/doc.txt", ""), InputLimits{}, ws, f.wsp)
	if err != nil || in.prompt() != "look:\nhello from a file" {
		t.Errorf("prompt = %q, %v", in.prompt(), err)
	}
	in, err = buildInput(urlMessage("file://"+ws+"/pic.png", ""), InputLimits{}, ws, f.wsp)
	if err != nil || len(in.attachments) != 1 {
		t.Fatalf("image: %v %v", in, err)
	}
	sum := sha256.Sum256([]byte("\x89PNG fake"))
	a := in.attachments[0]
	if a.Source != "file" || a.MediaType != "image/png" || a.ByteSize != 9 || a.SHA256 != hex.EncodeToString(sum[:]) || a.Path != filepath.Join(ws, "pic.png") || a.Filename != "pic.png" || a.Part != 1 {
		t.Errorf("attachment = %+v", a)
	}
	if !strings.Contains(in.prompt(), "Attachments:\n- part 1: pic.png (image/png, 9 bytes, sha256 "+a.SHA256+", source file)") {
		t.Errorf("manifest missing from prompt: %q", in.prompt())
	}
}

func TestWorkspaceAttackCorpus(t *testing.T) {
	f := newInputFixture(t)
	if err := os.WriteFile(filepath.Join(f.ws, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cwd string
		ok        bool
	}{
		{"relative", "allowed/ws", false},
		{"dotdot escape", f.ws + "/../../outside", false},
		{"symlink escape", f.ws + "/dir-out", false},
		{"not a directory", f.ws + "/file", false},
		{"missing", f.ws + "/missing", false},
		{"root", "/", false},
		{"outside root", f.outside, false},
		{"sibling prefix", f.base + "-x", false},
		{"inside", f.ws, true},
		{"nested", f.ws + "/sub", true},
		{"dotdot staying inside", f.ws + "/sub/..", true},
		{"default", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.wsp.Resolve(tc.cwd)
			if tc.ok != (err == nil) {
				t.Fatalf("Resolve(%q) = %q, %v; want ok=%v", tc.cwd, got, err, tc.ok)
			}
			if err != nil && strings.Contains(err.Error(), "/") {
				t.Errorf("error echoes a path: %v", err)
			}
		})
	}
}

func TestInputLimits(t *testing.T) {
	f := newInputFixture(t)
	const small = 64
	lim := InputLimits{MaxTextBytes: small, MaxInlineBytes: small, MaxFileBytes: small}
	sizes := []struct {
		n  int
		ok bool
	}{{small - 1, true}, {small, true}, {small + 1, false}}
	for _, sz := range sizes {
		// data part (JSON as sent)
		data := json.RawMessage(`"` + strings.Repeat("a", sz.n-2) + `"`)
		_, err := buildInput(&a2a.Message{Parts: []a2a.Part{{Data: data}}}, lim, f.ws, f.wsp)
		if (err == nil) != sz.ok {
			t.Errorf("data part of %d bytes: err=%v, want ok=%v", sz.n, err, sz.ok)
		}
		// raw text part
		_, err = buildInput(&a2a.Message{Parts: []a2a.Part{{Raw: []byte(strings.Repeat("b", sz.n)), MediaType: "text/plain"}}}, lim, f.ws, f.wsp)
		if (err == nil) != sz.ok {
			t.Errorf("raw text of %d bytes: err=%v, want ok=%v", sz.n, err, sz.ok)
		}
		// multimodal raw part
		_, err = buildInput(&a2a.Message{Parts: []a2a.Part{{Raw: make([]byte, sz.n), MediaType: "image/png"}}}, lim, f.ws, f.wsp)
		if (err == nil) != sz.ok {
			t.Errorf("raw image of %d bytes: err=%v, want ok=%v", sz.n, err, sz.ok)
		}
		// multimodal data part (base64 string)
		enc, _ := json.Marshal(base64.StdEncoding.EncodeToString(make([]byte, sz.n)))
		_, err = buildInput(&a2a.Message{Parts: []a2a.Part{{Data: enc, MediaType: "audio/wav"}}}, lim, f.ws, f.wsp)
		if (err == nil) != sz.ok {
			t.Errorf("data audio of %d bytes: err=%v, want ok=%v", sz.n, err, sz.ok)
		}
		// file text and file image
		for _, ext := range []string{".txt", ".png"} {
			p := filepath.Join(f.ws, "sized"+ext)
			if err := os.WriteFile(p, []byte(strings.Repeat("c", sz.n)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = buildInput(urlMessage("file://"+p, ""), lim, f.ws, f.wsp)
			if (err == nil) != sz.ok {
				t.Errorf("file %s of %d bytes: err=%v, want ok=%v", ext, sz.n, err, sz.ok)
			}
			if err != nil {
				wantInvalid(t, err, "message.parts[1]")
			}
		}
	}
	// The defaults are 1 MiB, 5 MiB and 25 MiB.
	d := InputLimits{}.withDefaults()
	if d.MaxTextBytes != 1<<20 || d.MaxInlineBytes != 5<<20 || d.MaxFileBytes != 25<<20 {
		t.Errorf("defaults = %+v", d)
	}
	_, err := buildInput(&a2a.Message{Parts: []a2a.Part{{Raw: []byte(strings.Repeat("x", 1<<20+1))}}}, InputLimits{}, f.ws, f.wsp)
	wantInvalid(t, err, "message.parts[0]")
	if _, err := buildInput(&a2a.Message{Parts: []a2a.Part{{Raw: []byte(strings.Repeat("x", 1<<20))}}}, InputLimits{}, f.ws, f.wsp); err != nil {
		t.Errorf("1 MiB raw text rejected: %v", err)
	}
}

func TestInputPartRules(t *testing.T) {
	f := newInputFixture(t)
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name   string
		parts  []a2a.Part
		lim    InputLimits
		code   int
		prompt string
		atts   int
	}{
		{"text", []a2a.Part{{Text: str("hi")}}, InputLimits{}, 0, "hi", 0},
		{"text with charset", []a2a.Part{{Text: str("hi"), MediaType: "text/plain; charset=utf-8"}}, InputLimits{}, 0, "hi", 0},
		{"yaml text", []a2a.Part{{Text: str("a: 1"), MediaType: "application/yaml"}}, InputLimits{}, 0, "a: 1", 0},
		{"markdown", []a2a.Part{{Text: str("# t"), MediaType: "text/markdown"}}, InputLimits{}, 0, "# t", 0},
		{"configured text type", []a2a.Part{{Text: str("x"), MediaType: "application/hcl"}}, InputLimits{TextTypes: []string{"application/hcl"}}, 0, "x", 0},
		{"text as image type", []a2a.Part{{Text: str("x"), MediaType: "image/png"}}, InputLimits{}, a2a.CodeContentTypeNotSupported, "", 0},
		{"data compact", []a2a.Part{{Data: json.RawMessage(`{ "a" : [1, 2] }`)}}, InputLimits{}, 0, `{"a":[1,2]}`, 0},
		{"data json type", []a2a.Part{{Data: json.RawMessage(`[1]`), MediaType: "application/json"}}, InputLimits{}, 0, `[1]`, 0},
		{"data bad base64 image", []a2a.Part{{Data: json.RawMessage(`"!!!"`), MediaType: "image/png"}}, InputLimits{}, a2a.CodeInvalidParams, "", 0},
		{"data image not a string", []a2a.Part{{Data: json.RawMessage(`{"a":1}`), MediaType: "image/png"}}, InputLimits{}, a2a.CodeInvalidParams, "", 0},
		{"data unsupported", []a2a.Part{{Data: json.RawMessage(`"AA=="`), MediaType: "application/zip"}}, InputLimits{}, a2a.CodeContentTypeNotSupported, "", 0},
		{"raw invalid utf8", []a2a.Part{{Raw: []byte{0xff, 0xfe}}}, InputLimits{}, a2a.CodeInvalidParams, "", 0},
		{"raw text", []a2a.Part{{Raw: []byte("raw words"), MediaType: "text/plain"}}, InputLimits{}, 0, "raw words", 0},
		{"raw image", []a2a.Part{{Raw: []byte{1, 2, 3}, MediaType: "image/jpeg", Filename: "../../etc/a b.jpg"}}, InputLimits{}, 0, "", 1},
		{"raw audio", []a2a.Part{{Raw: []byte{1}, MediaType: "audio/wav"}}, InputLimits{}, 0, "", 1},
		{"raw pdf unsupported", []a2a.Part{{Raw: []byte{1}, MediaType: "application/pdf"}}, InputLimits{}, a2a.CodeContentTypeNotSupported, "", 0},
		{"raw pdf configured", []a2a.Part{{Raw: []byte{1}, MediaType: "application/pdf"}}, InputLimits{MediaTypes: []string{"application/pdf"}}, 0, "", 1},
		{"image only is input", []a2a.Part{{Raw: []byte{1}, MediaType: "image/gif"}}, InputLimits{}, 0, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := buildInput(&a2a.Message{Parts: tc.parts}, tc.lim, f.ws, f.wsp)
			if tc.code != 0 {
				var ae *a2a.Error
				if !errors.As(err, &ae) || ae.Code != tc.code {
					t.Fatalf("err = %v, want code %d", err, tc.code)
				}
				if !strings.Contains(ae.Message, "message.parts[0]") {
					t.Errorf("error %q does not name the part", ae.Message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.text != tc.prompt || len(in.attachments) != tc.atts || !in.hasInput() {
				t.Errorf("text %q atts %d", in.text, len(in.attachments))
			}
			for _, a := range in.attachments {
				if strings.ContainsAny(a.Filename, "/ ") || strings.HasPrefix(a.Filename, ".") {
					t.Errorf("unsafe filename %q", a.Filename)
				}
			}
		})
	}
	// Blank text and nothing else: no input (the task fails text-only).
	in, err := buildInput(&a2a.Message{Parts: []a2a.Part{{Text: str("  \n")}}}, InputLimits{}, f.ws, f.wsp)
	if err != nil || in.hasInput() {
		t.Errorf("blank text: %v hasInput=%v", err, in.hasInput())
	}
}

func TestStoreInputs(t *testing.T) {
	dir := t.TempDir()
	atts := []backend.Attachment{inlineAttachment(2, "cat.png", "image/png", "raw", []byte("img")), {Source: "file", Path: "/x"}}
	if err := storeInputs(dir, "task-1", atts); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "task-1", "2-cat.png")
	if atts[0].Path != want || atts[1].Path != "/x" {
		t.Fatalf("paths = %q %q", atts[0].Path, atts[1].Path)
	}
	fi, err := os.Stat(want)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stored input: %v %v", fi, err)
	}
	b, _ := os.ReadFile(want)
	if string(b) != "img" {
		t.Errorf("content %q", b)
	}
}

// INPUT-1a: gateway state is never input, whatever the roots say — a
// denied path (file or directory), a directory holding the state marker
// (any instance's data dir) and /proc, directly or through a symlink
// inside the workspace; a workspace inside the state is invalid too.
func TestInputDeniedStatePaths(t *testing.T) {
	f := newInputFixture(t)
	data := filepath.Join(f.ws, "data") // a data dir inside the workspace, as ./data under the working dir
	other := filepath.Join(f.other, "instance-2", "data")
	keyFile := filepath.Join(f.ws, "card-ec.pem")
	for _, d := range []string{filepath.Join(data, "inputs", "t1"), other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		filepath.Join(data, "push.keys"):            "PUSH-KEYS",
		filepath.Join(data, "pagetoken.key"):        "PAGE-KEY",
		filepath.Join(data, "a2a.db"):               "SQLITE",
		filepath.Join(data, "inputs", "t1", "0-in"): "INPUT",
		filepath.Join(other, "push.keys"):           "OTHER-KEYS",
		keyFile:                                     "PEM",
		filepath.Join(f.ws, "plain.txt"):            "plain",
	} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := MarkStateDir(other); err != nil { // the second instance marks its data dir
		t.Fatal(err)
	}
	if err := MarkStateDir(other); err != nil { // idempotent
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(data, "push.keys"), filepath.Join(f.ws, "keys-link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("data/pagetoken.key", filepath.Join(f.ws, "rel-link.txt")); err != nil {
		t.Fatal(err)
	}
	ws := NewWorkspace(f.ws, []string{f.base})
	ws.Denied = NewDenyList(data, keyFile)
	otherWS := filepath.Join(f.other, "instance-2")
	for _, tc := range []struct{ cwd, path string }{
		{f.ws, filepath.Join(data, "push.keys")},
		{f.ws, filepath.Join(data, "pagetoken.key")},
		{f.ws, filepath.Join(data, "a2a.db")},
		{f.ws, filepath.Join(data, "inputs", "t1", "0-in")},
		{f.ws, keyFile},
		{f.ws, filepath.Join(f.ws, "keys-link.txt")},
		{f.ws, filepath.Join(f.ws, "rel-link.txt")},
		{otherWS, filepath.Join(other, "push.keys")},
		{otherWS, filepath.Join(other, StateMarker)},
	} {
		_, err := buildInput(urlMessage("file://"+tc.path, "text/plain"), InputLimits{}, tc.cwd, ws)
		wantInvalid(t, err, "message.parts[1]")
		if ae := (*a2a.Error)(nil); errors.As(err, &ae) && (strings.Contains(ae.Message, f.base) || !strings.Contains(ae.Message, "outside the workspace")) {
			t.Errorf("%s: error %q, want the path-free outside-the-workspace error", tc.path, ae.Message)
		}
	}
	if in, err := buildInput(urlMessage("file://"+filepath.Join(f.ws, "plain.txt"), "text/plain"), InputLimits{}, f.ws, ws); err != nil || !strings.Contains(in.text, "plain") {
		t.Errorf("a plain workspace file next to the data dir: %v", err)
	}
	// No workspace inside the gateway state.
	for _, cwd := range []string{data, filepath.Join(data, "inputs"), other, "/proc", "/proc/self"} {
		if _, err := ws.Resolve(cwd); err == nil {
			t.Errorf("workspace %s inside the gateway state accepted", cwd)
		}
	}
	if _, err := ws.Resolve(f.ws); err != nil {
		t.Errorf("the workspace holding the data dir refused: %v", err)
	}
	// Symlinks of denied paths are resolved when they are added.
	link := filepath.Join(f.base, "data-link")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	d := NewDenyList(link, filepath.Join(link, "not-yet", "file"))
	if !d.Denies(filepath.Join(data, "push.keys")) || !d.Denies(filepath.Join(data, "not-yet", "file")) {
		t.Errorf("denied symlink not resolved: %v", d.Paths())
	}
}

// INPUT-1a: a file inside the workspace swapped between a regular file, a
// symlink to a secret outside the roots, symlinks to /proc/self/environ
// and to a state file inside the roots, and a FIFO (and a directory on
// its path swapped for a symlink out) while 4,000 reads run: every read
// either fails or returns the public content, none takes a second, and no
// goroutine is left behind.
func TestReadFilePartSwapRace(t *testing.T) {
	f := newInputFixture(t)
	const public = "public content"
	state := filepath.Join(f.ws, "state")
	for _, d := range []string{state, filepath.Join(f.ws, "dirA")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := MarkStateDir(state); err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{
		filepath.Join(state, "push.keys"):         "STATE SECRET",
		filepath.Join(f.ws, "dirA", "secret.txt"): public,
		filepath.Join(f.ws, "swap.txt"):           public,
	} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("dirA", filepath.Join(f.ws, "swapdir")); err != nil {
		t.Fatal(err)
	}
	ws := f.wsp
	target := filepath.Join(f.ws, "swap.txt")
	dirTarget := filepath.Join(f.ws, "swapdir")
	// The swapped-in entries: the public file plus the attacks, each
	// exchanged with the target by swapPaths (a permutation: every kind
	// is always present under some name).
	var fileVariants, dirVariants []string
	mk := func(list *[]string, make func(p string) error) {
		p := filepath.Join(f.ws, fmt.Sprintf(".variant-%d", len(fileVariants)+len(dirVariants)))
		if err := make(p); err != nil {
			t.Fatal(err)
		}
		*list = append(*list, p)
	}
	mk(&fileVariants, func(p string) error { return os.WriteFile(p, []byte(public), 0o600) })
	mk(&fileVariants, func(p string) error { return os.Symlink(filepath.Join(f.outside, "secret.txt"), p) })
	mk(&fileVariants, func(p string) error { return os.Symlink("/proc/self/environ", p) })
	mk(&fileVariants, func(p string) error { return os.Symlink(filepath.Join(state, "push.keys"), p) })
	mk(&fileVariants, func(p string) error { return os.Symlink("state/push.keys", p) })
	mk(&fileVariants, func(p string) error { return syscall.Mkfifo(p, 0o600) })
	mk(&dirVariants, func(p string) error { return os.Symlink(filepath.Join(f.ws, "dirA"), p) })
	mk(&dirVariants, func(p string) error { return os.Symlink(f.outside, p) })

	baseline := runtime.NumGoroutine()
	stop := make(chan struct{})
	var swapper sync.WaitGroup
	for s := 0; s < 2; s++ {
		swapper.Add(1)
		go func() {
			defer swapper.Done()
			for i := s; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if s == 0 {
					_ = swapPaths(target, fileVariants[i%len(fileVariants)])
				} else {
					_ = swapPaths(dirTarget, dirVariants[i%len(dirVariants)])
				}
			}
		}()
	}

	const workers, perWorker = 4, 1000
	var mu sync.Mutex
	var ok, leaks, slow int
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				u := "file://" + target
				if i%4 == 3 {
					u = "file://" + dirTarget + "/secret.txt"
				}
				done := make(chan string, 1)
				go func() {
					text, _, err := readFilePart(a2a.Part{URL: u, MediaType: "text/plain"}, 0, "message.parts[0]", InputLimits{}.withDefaults(), f.ws, ws)
					if err != nil {
						text = "\x00error"
					}
					done <- text
				}()
				var text string
				// A read that does not answer within 20s hangs (a FIFO
				// opened blocking, a stuck swap); no bound on a read's time
				// otherwise: under -race on 2 shared cores a read may take
				// a second without anything being wrong (issue 33.6).
				select {
				case text = <-done:
				case <-time.After(20 * time.Second):
					text = "\x00hung"
				}
				mu.Lock()
				switch {
				case text == "\x00hung":
					slow++
				case text == public:
					ok++
				case text != "\x00error":
					leaks++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	swapper.Wait()
	if leaks != 0 || slow != 0 {
		t.Errorf("%d reads of %d leaked a file other than the public one, %d hung (no answer in 20s)", leaks, workers*perWorker, slow)
	}
	if ok == 0 {
		t.Errorf("no read succeeded: the race test exercised nothing")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline+2 {
		t.Errorf("%d goroutines after the race, %d before (reads stuck)", n, baseline)
	}
	t.Logf("%d reads: %d returned the public file, the rest were refused", workers*perWorker, ok)
}
