package caddya2a_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink matches an inline markdown link or image target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// htmlID matches an explicit anchor such as <a id="name"></a>.
var htmlID = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// TestDocsLinks checks that every relative link in README.md,
// ARCHITECTURE.md and docs/*.md points to a file of the repository and
// every #anchor to a heading (GitHub's slug rule) or an <a id> of the
// target file. Links inside fenced code blocks and inline code are not
// links and are skipped.
func TestDocsLinks(t *testing.T) {
	files := []string{"README.md", "ARCHITECTURE.md"}
	more, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		a := map[string]bool{}
		seen := map[string]int{}
		for _, line := range prose(string(src)) {
			if h, ok := heading(line); ok {
				s := slug(h)
				n := seen[s]
				seen[s] = n + 1
				if n > 0 {
					s += "-" + itoa(n)
				}
				a[s] = true
			}
			for _, m := range htmlID.FindAllStringSubmatch(line, -1) {
				a[m[1]] = true
			}
		}
		anchors[path] = a
		return a
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range prose(string(src)) {
			for _, m := range mdLink.FindAllStringSubmatch(stripCode(line), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				file := f
				if path != "" {
					file = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
					if _, err := os.Stat(file); err != nil {
						t.Errorf("%s:%d: link %q: no file %s", f, i+1, target, file)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(file, ".md") {
					continue
				}
				if !anchorsOf(file)[frag] {
					t.Errorf("%s:%d: link %q: no heading #%s in %s", f, i+1, target, frag, file)
				}
			}
		}
	}
}

// prose returns the lines of a markdown text with the lines of fenced code
// blocks blanked, so line numbers stay those of the file.
func prose(src string) []string {
	lines := strings.Split(src, "\n")
	fence := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			lines[i] = ""
			continue
		}
		if fence {
			lines[i] = ""
		}
	}
	return lines
}

// stripCode removes inline code spans from a line.
func stripCode(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// heading returns the text of an ATX heading line.
func heading(line string) (string, bool) {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(line) || line[n] != ' ' {
		return "", false
	}
	return strings.TrimSpace(line[n:]), true
}

// slug is GitHub's heading anchor: lower case, punctuation other than '-'
// and '_' dropped, each space a '-'.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r > 127 && isLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isLetter(r rune) bool {
	return r != '…' && r != '—' && r != '–' && r != '→' && r != '§' && r != '·'
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
