// Package validate checks an A2A 1.0 Agent Card (CARD-9): required
// fields, skills, descriptions, generic names, v0.x fields with their v1.0
// replacement, embedded credentials, security declarations, the known
// clients that cannot read the card (the a2a-go form of
// securityRequirements), non-HTTPS URLs and signatures. Probe additionally checks a live agent against its
// card. Each problem is a Finding with a JSON pointer and a fix.
//
// The package has no Caddy imports; fetching is bounded by timeouts and
// size limits.
package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// Severity of a finding.
type Severity string

// Severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Finding is one problem found in a card or a live agent.
type Finding struct {
	// Severity is error, warning or info.
	Severity Severity `json:"severity"`
	// Pointer is the RFC 6901 JSON pointer of the field ("" = the card).
	Pointer string `json:"pointer"`
	// Message says what is wrong.
	Message string `json:"message"`
	// Fix says how to fix it.
	Fix string `json:"fix,omitempty"`
}

// String formats the finding as one line.
func (f Finding) String() string {
	p := f.Pointer
	if p == "" {
		p = "/"
	}
	s := fmt.Sprintf("%-7s %s: %s", f.Severity, p, f.Message)
	if f.Fix != "" {
		s += " — fix: " + f.Fix
	}
	return s
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity == Error })
}

// Options tune Card.
type Options struct {
	// Production turns non-HTTPS URLs from warnings into errors.
	Production bool
	// Verifier, when set, checks the card's signatures; a signature that
	// does not verify is an error. Without it, signatures are reported as
	// not checked.
	Verifier *jws.Verifier
	// Context bounds key fetches of the verifier. Default: Background.
	Context context.Context
}

// Pointer escapes tokens into an RFC 6901 JSON pointer.
func Pointer(tokens ...any) string {
	var b strings.Builder
	for _, t := range tokens {
		s := fmt.Sprint(t)
		s = strings.ReplaceAll(s, "~", "~0")
		s = strings.ReplaceAll(s, "/", "~1")
		b.WriteString("/" + s)
	}
	return b.String()
}

// checker collects the findings of one Card run.
type checker struct {
	opts Options
	out  []Finding
}

// add records one finding.
func (c *checker) add(sev Severity, ptr, msg, fix string) {
	c.out = append(c.out, Finding{Severity: sev, Pointer: ptr, Message: msg, Fix: fix})
}

// Card validates the card JSON raw.
func Card(raw []byte, opts Options) []Finding {
	c := &checker{opts: opts}
	if len(raw) > jws.MaxCardBytes {
		c.add(Error, "", fmt.Sprintf("card is larger than %d bytes", jws.MaxCardBytes), "keep the card small; move detail to documentationUrl")
		return c.out
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var card map[string]any
	if err := dec.Decode(&card); err != nil || card == nil {
		c.add(Error, "", "the card is not a JSON object", "serve a JSON object as application/a2a+json")
		return c.out
	}
	c.required(card)
	c.texts(card)
	c.v0(card)
	c.interfaces(card)
	c.provider(card)
	c.skills(card)
	c.security(card)
	c.clients(card)
	c.urls(card)
	c.credentials(card, "")
	c.signatures(raw, card)
	return c.out
}

// str returns m[k] when it is a string.
func str(m map[string]any, k string) (string, bool) {
	s, ok := m[k].(string)
	return s, ok
}

// splitPtr splits a JSON pointer into its unescaped tokens.
func splitPtr(p string) []any {
	var out []any
	for _, t := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		out = append(out, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
	}
	return out
}

// walkStrings calls fn for every string value under v with its pointer and
// member name (empty inside arrays).
func walkStrings(v any, ptr string, fn func(ptr, key, s string)) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := ptr + Pointer(k)
			if s, ok := t[k].(string); ok {
				fn(p, k, s)
				continue
			}
			walkStrings(t[k], p, fn)
		}
	case []any:
		for i, e := range t {
			p := ptr + Pointer(i)
			if s, ok := e.(string); ok {
				fn(p, "", s)
				continue
			}
			walkStrings(e, p, fn)
		}
	}
}
