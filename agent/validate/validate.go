// Package validate checks an A2A 1.0 Agent Card (CARD-9): required
// fields, skills, descriptions, generic names, v0.x fields with their v1.0
// replacement, embedded credentials, security declarations, non-HTTPS
// URLs and signatures. Probe additionally checks a live agent against its
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
	"net/url"
	"regexp"
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

type checker struct {
	opts Options
	out  []Finding
}

func (c *checker) add(sev Severity, ptr, msg, fix string) {
	c.out = append(c.out, Finding{Severity: sev, Pointer: ptr, Message: msg, Fix: fix})
}

// genericNames are names that tell a router nothing.
var genericNames = []string{
	"ai assistant", "assistant", "agent", "ai agent", "my agent", "chatbot", "bot",
	"helper", "test agent", "a2a agent", "llm agent", "my assistant", "default agent",
}

// v0Fields maps pre-1.0 top-level fields to their v1.0 replacement.
var v0Fields = []struct{ field, replacement, fix string }{
	{"url", "/supportedInterfaces/0/url", `move it into supportedInterfaces: [{"url": …, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]; the first entry is preferred`},
	{"preferredTransport", "/supportedInterfaces", "express the preference by ordering supportedInterfaces (first = preferred)"},
	{"additionalInterfaces", "/supportedInterfaces", "list every interface in supportedInterfaces, each with url, protocolBinding and protocolVersion"},
	{"protocolVersion", "/supportedInterfaces/*/protocolVersion", `set protocolVersion ("1.0") on each supportedInterfaces entry`},
	{"supportsAuthenticatedExtendedCard", "/capabilities/extendedAgentCard", "use capabilities.extendedAgentCard"},
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
	c.urls(card)
	c.credentials(card, "")
	c.signatures(raw, card)
	return c.out
}

func str(m map[string]any, k string) (string, bool) {
	s, ok := m[k].(string)
	return s, ok
}

func (c *checker) required(card map[string]any) {
	for _, f := range []struct{ name, fix string }{
		{"name", `add "name": a short, specific human-readable name`},
		{"description", `add "description": what the agent does and when to call it`},
		{"version", `add "version": the agent's own version, e.g. "1.0.0" (bump it whenever the card changes)`},
	} {
		if s, ok := str(card, f.name); !ok || strings.TrimSpace(s) == "" {
			c.add(Error, Pointer(f.name), "required field "+f.name+" is missing or empty", f.fix)
		}
	}
	if _, ok := card["capabilities"].(map[string]any); !ok {
		c.add(Error, "/capabilities", "required field capabilities is missing or not an object",
			`add "capabilities": {"streaming": false, "pushNotifications": false, "extendedAgentCard": false}`)
	}
	for _, f := range []string{"supportedInterfaces", "defaultInputModes", "defaultOutputModes"} {
		arr, ok := card[f].([]any)
		if !ok || len(arr) == 0 {
			fix := `add "` + f + `": ["text/plain"] (media types), required in v1.0`
			if f == "supportedInterfaces" {
				fix = `add "supportedInterfaces": [{"url": "https://…", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]`
			}
			c.add(Error, Pointer(f), "required field "+f+" is missing or empty", fix)
		}
	}
	switch s := card["skills"].(type) {
	case []any:
		if len(s) == 0 {
			c.add(Warning, "/skills", "the card declares no skills", "add at least one skill with id, name, description and tags so routers can match tasks")
		}
	default:
		c.add(Error, "/skills", "required field skills is missing or not an array", `add "skills": [{"id": …, "name": …, "description": …, "tags": […]}]`)
	}
}

func (c *checker) texts(card map[string]any) {
	if name, ok := str(card, "name"); ok && slices.Contains(genericNames, strings.ToLower(strings.TrimSpace(name))) {
		c.add(Warning, "/name", fmt.Sprintf("name %q is generic and gives routers nothing to tell agents apart", name),
			"use a specific name that says what the agent does, e.g. \"GeoSpatial Route Planner\"")
	}
	if d, ok := str(card, "description"); ok && strings.TrimSpace(d) != "" && len([]rune(strings.TrimSpace(d))) < 20 {
		c.add(Warning, "/description", "description is shorter than 20 characters",
			"state the task domain, main capabilities and limits so routers can match tasks")
	}
}

func (c *checker) v0(card map[string]any) {
	_, hasIfaces := card["supportedInterfaces"].([]any)
	for _, f := range v0Fields {
		if _, ok := card[f.field]; !ok {
			continue
		}
		sev := Error
		if f.field == "supportsAuthenticatedExtendedCard" {
			if caps, ok := card["capabilities"].(map[string]any); ok {
				if _, ok := caps["extendedAgentCard"]; ok {
					sev = Warning
				}
			}
		} else if hasIfaces {
			sev = Warning
		}
		c.add(sev, Pointer(f.field), fmt.Sprintf("%s is a v0.x field; v1.0 uses %s", f.field, f.replacement), f.fix)
	}
	if caps, ok := card["capabilities"].(map[string]any); ok {
		if _, ok := caps["stateTransitionHistory"]; ok {
			c.add(Warning, "/capabilities/stateTransitionHistory", "capabilities.stateTransitionHistory was removed in v1.0",
				"remove it; model the behaviour as an extension if you need it")
		}
	}
}

var (
	bindings   = []string{"JSONRPC", "GRPC", "HTTP+JSON"}
	versionRe  = regexp.MustCompile(`^\d+\.\d+$`)
	hostPortRe = regexp.MustCompile(`^[A-Za-z0-9.\-\[\]:]+:\d+$`)
)

func (c *checker) interfaces(card map[string]any) {
	arr, _ := card["supportedInterfaces"].([]any)
	for i, e := range arr {
		ptr := Pointer("supportedInterfaces", i)
		m, ok := e.(map[string]any)
		if !ok {
			c.add(Error, ptr, "interface is not an object", "use {url, protocolBinding, protocolVersion}")
			continue
		}
		u, _ := str(m, "url")
		b, _ := str(m, "protocolBinding")
		v, _ := str(m, "protocolVersion")
		if b == "" {
			c.add(Error, ptr+"/protocolBinding", "protocolBinding is missing", `set "JSONRPC", "HTTP+JSON", "GRPC" or a URI for a custom binding`)
		} else if !slices.Contains(bindings, b) && !isAbsURI(b) {
			c.add(Error, ptr+"/protocolBinding", fmt.Sprintf("protocolBinding %q is not JSONRPC, GRPC, HTTP+JSON or a URI", b),
				`use the exact upper-case names, e.g. "HTTP+JSON" (not "REST" or "jsonrpc")`)
		}
		if v == "" {
			c.add(Error, ptr+"/protocolVersion", "protocolVersion is missing", `set "1.0"`)
		} else if !versionRe.MatchString(v) {
			c.add(Error, ptr+"/protocolVersion", fmt.Sprintf("protocolVersion %q is not Major.Minor", v), `use "1.0"`)
		}
		switch {
		case u == "":
			c.add(Error, ptr+"/url", "url is missing", "set the absolute URL of this endpoint")
		case b == "GRPC":
			if !hostPortRe.MatchString(u) && !isAbsURL(u) {
				c.add(Error, ptr+"/url", fmt.Sprintf("gRPC url %q is not host:port", u), "use host:port, e.g. agent.example.com:443")
			}
		case !isAbsURL(u):
			c.add(Error, ptr+"/url", fmt.Sprintf("url %q is not an absolute http(s) URL", u), "use an absolute https URL")
		}
	}
}

func isAbsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func isAbsURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != "")
}

func (c *checker) provider(card map[string]any) {
	raw, present := card["provider"]
	if !present {
		return
	}
	p, ok := raw.(map[string]any)
	if !ok {
		c.add(Error, "/provider", "provider is not an object", `use {"organization": …, "url": …}`)
		return
	}
	if _, ok := p["name"]; ok {
		sev := Error
		if _, ok := p["organization"]; ok {
			sev = Warning
		}
		c.add(sev, "/provider/name", "provider.name is a v0.x field; v1.0 uses provider.organization", "rename provider.name to provider.organization")
	} else if s, _ := str(p, "organization"); strings.TrimSpace(s) == "" {
		c.add(Error, "/provider/organization", "provider.organization is required when provider is present", "set the organisation running the agent")
	}
	if s, _ := str(p, "url"); s == "" {
		c.add(Error, "/provider/url", "provider.url is required when provider is present", "set the provider's web site, e.g. https://example.com")
	}
}

func (c *checker) skills(card map[string]any) {
	arr, _ := card["skills"].([]any)
	ids := map[string]bool{}
	for i, e := range arr {
		ptr := Pointer("skills", i)
		m, ok := e.(map[string]any)
		if !ok {
			c.add(Error, ptr, "skill is not an object", "use {id, name, description, tags}")
			continue
		}
		for _, f := range []string{"id", "name", "description"} {
			if s, _ := str(m, f); strings.TrimSpace(s) == "" {
				c.add(Error, ptr+"/"+f, "skill "+f+" is missing or empty", "every skill needs id, name, description and tags")
			}
		}
		if id, _ := str(m, "id"); id != "" {
			if ids[id] {
				c.add(Error, ptr+"/id", fmt.Sprintf("duplicate skill id %q", id), "give each skill a unique id")
			}
			ids[id] = true
		}
		if tags, _ := m["tags"].([]any); len(tags) == 0 {
			c.add(Error, ptr+"/tags", "skill has no tags (required in v1.0)", `add "tags": ["…"] with keywords routers match on`)
		}
		if d, ok := str(m, "description"); ok && strings.TrimSpace(d) != "" && len([]rune(strings.TrimSpace(d))) < 20 {
			c.add(Warning, ptr+"/description", "skill description is shorter than 20 characters", "describe the task boundary of the skill")
		}
	}
}

// requirementNames returns the scheme names of a v1.0 SecurityRequirement
// ({"schemes": {name: {"list": […]}}}) or, for legacy shapes, of the
// object itself ({name: [scopes]}).
func requirementNames(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	src := m
	if s, ok := m["schemes"].(map[string]any); ok {
		src = s
	}
	var names []string
	for k := range src {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (c *checker) security(card map[string]any) {
	schemes, _ := card["securitySchemes"].(map[string]any)
	names := make([]string, 0, len(schemes))
	for name := range schemes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ptr := Pointer("securitySchemes", name)
		m, ok := schemes[name].(map[string]any)
		if !ok || len(m) != 1 {
			c.add(Error, ptr, "a security scheme must have exactly one member (apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme or mtlsSecurityScheme)",
				`wrap the scheme, e.g. {"httpAuthSecurityScheme": {"scheme": "Bearer"}}; v0.x "type" discriminators are gone`)
		}
	}
	used := false
	checkReqs := func(ptr string, v any) {
		arr, _ := v.([]any)
		for i, r := range arr {
			used = true
			for _, n := range requirementNames(r) {
				if _, ok := schemes[n]; !ok {
					c.add(Error, Pointer(append(splitPtr(ptr), i)...), fmt.Sprintf("security requirement names scheme %q, which securitySchemes does not declare", n),
						fmt.Sprintf("declare %q in securitySchemes or fix the name", n))
				}
			}
		}
	}
	checkReqs("/securityRequirements", card["securityRequirements"])
	if legacy, ok := card["security"]; ok {
		checkReqs("/security", legacy)
		c.add(Warning, "/security", "security is the pre-1.0 name of securityRequirements",
			"use "+securityRequirementsShape(legacy))
	}
	skills, _ := card["skills"].([]any)
	for i, s := range skills {
		if m, ok := s.(map[string]any); ok {
			checkReqs(Pointer("skills", i, "securityRequirements"), m["securityRequirements"])
		}
	}
	if len(schemes) > 0 && !used {
		c.add(Warning, "/securitySchemes", "securitySchemes are declared but no securityRequirements says which are needed",
			"add "+securityRequirementsShape(nil)+" naming the schemes clients must use")
	}
	if caps, ok := card["capabilities"].(map[string]any); ok && caps["extendedAgentCard"] == true && len(schemes) == 0 {
		c.add(Warning, "/capabilities/extendedAgentCard", "extendedAgentCard is true but no securitySchemes say how to authenticate for it",
			"declare the scheme(s) GetExtendedAgentCard accepts in securitySchemes and securityRequirements")
	}
}

func splitPtr(p string) []any {
	var out []any
	for _, t := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		out = append(out, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
	}
	return out
}

// securityRequirementsShape renders legacy requirements in the v1.0 shape.
func securityRequirementsShape(legacy any) string {
	arr, _ := legacy.([]any)
	var reqs []map[string]any
	for _, r := range arr {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		schemes := map[string]any{}
		for k, v := range m {
			scopes := []any{}
			if l, ok := v.([]any); ok {
				scopes = l
			}
			schemes[k] = map[string]any{"list": scopes}
		}
		reqs = append(reqs, map[string]any{"schemes": schemes})
	}
	if len(reqs) == 0 {
		reqs = []map[string]any{{"schemes": map[string]any{"<scheme>": map[string]any{"list": []any{}}}}}
	}
	b, _ := json.Marshal(map[string]any{"securityRequirements": reqs})
	return strings.TrimSuffix(strings.TrimPrefix(string(b), "{"), "}")
}

// urlFields are the URL-valued fields checked for HTTPS.
func (c *checker) urls(card map[string]any) {
	sev := Warning
	fix := "serve it over HTTPS"
	if c.opts.Production {
		sev = Error
	}
	check := func(ptr, u string) {
		if strings.HasPrefix(strings.ToLower(u), "http://") {
			c.add(sev, ptr, fmt.Sprintf("URL %q does not use HTTPS", u), fix)
		}
	}
	for _, f := range []string{"documentationUrl", "iconUrl", "url"} {
		if s, ok := str(card, f); ok {
			check(Pointer(f), s)
		}
	}
	if p, ok := card["provider"].(map[string]any); ok {
		if s, ok := str(p, "url"); ok {
			check("/provider/url", s)
		}
	}
	arr, _ := card["supportedInterfaces"].([]any)
	for i, e := range arr {
		if m, ok := e.(map[string]any); ok {
			if s, ok := str(m, "url"); ok {
				check(Pointer("supportedInterfaces", i, "url"), s)
			}
		}
	}
	if schemes, ok := card["securitySchemes"].(map[string]any); ok {
		walkStrings(schemes, "/securitySchemes", func(ptr, key, s string) {
			if strings.HasSuffix(key, "Url") {
				check(ptr, s)
			}
		})
	}
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

var (
	secretKeyRe = regexp.MustCompile(`(?i)^(password|passwd|secret|client_?secret|api_?key|apikey|access_?token|refresh_?token|token|private_?key|bearer|authorization|credentials?)$`)
	secretQuery = regexp.MustCompile(`(?i)^(password|passwd|secret|client_secret|api_?key|apikey|access_token|token|key|sig|signature|auth)$`)
	tokenRes    = []*regexp.Regexp{
		regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+`), // JWT
		regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}`),
		regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`),            // OpenAI-style keys
		regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),               // AWS access key id
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`),       // GitHub tokens
		regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`),     // Slack tokens
		regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), // PEM keys
	}
)

// credentials reports credentials embedded anywhere in the card except in
// signatures (which are base64url by design).
func (c *checker) credentials(card map[string]any, _ string) {
	rest := make(map[string]any, len(card))
	for k, v := range card {
		if k != "signatures" {
			rest[k] = v
		}
	}
	const fix = "remove it: an Agent Card is public; credentials are obtained out of band and securitySchemes only says how to authenticate"
	walkStrings(rest, "", func(ptr, key, s string) {
		if s == "" {
			return
		}
		if key != "" && secretKeyRe.MatchString(key) && !strings.HasPrefix(ptr, "/securitySchemes/") {
			c.add(Error, ptr, fmt.Sprintf("member %q looks like an embedded credential", key), fix)
			return
		}
		if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
			if _, hasPw := u.User.Password(); hasPw || (u.User != nil && u.User.Username() != "") {
				c.add(Error, ptr, "URL contains user credentials", fix)
				return
			}
			for q := range u.Query() {
				if secretQuery.MatchString(q) {
					c.add(Error, ptr, fmt.Sprintf("URL carries a credential in its %q query parameter", q), fix)
					return
				}
			}
		}
		for _, re := range tokenRes {
			if re.MatchString(s) {
				c.add(Error, ptr, "value looks like a token or key", fix)
				return
			}
		}
	})
}

func (c *checker) signatures(raw []byte, card map[string]any) {
	sigs, present := card["signatures"]
	if !present {
		return
	}
	arr, ok := sigs.([]any)
	if !ok {
		c.add(Error, "/signatures", "signatures is not an array", `use [{"protected": …, "signature": …}]`)
		return
	}
	for i, s := range arr {
		m, ok := s.(map[string]any)
		p, _ := str(m, "protected")
		sg, _ := str(m, "signature")
		if !ok || p == "" || sg == "" {
			c.add(Error, Pointer("signatures", i), "signature entry needs protected and signature", "re-sign the card")
			continue
		}
		if _, err := jws.ParseHeader(p); err != nil {
			c.add(Error, Pointer("signatures", i, "protected"), "protected header: "+err.Error(), "re-sign with alg, kid and typ \"JOSE\" in the protected header")
		}
	}
	if c.opts.Verifier == nil {
		if len(arr) > 0 {
			c.add(Info, "/signatures", "signatures not checked (no keys given)", "pass --hs256-env kid=VAR, --jwks-file, --jwks-url or --allow-jku to verify them")
		}
		return
	}
	ctx := c.opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	results, err := c.opts.Verifier.VerifyCard(ctx, raw)
	if err != nil && len(results) == 0 {
		c.add(Error, "/signatures", "signatures cannot be verified: "+err.Error(), "re-sign the card after its last change")
		return
	}
	sev := Error
	if err == nil {
		sev = Warning // another signature verified (e.g. a rotated key)
	}
	for _, r := range results {
		if r.Err != nil {
			c.add(sev, Pointer("signatures", r.Index), "signature does not verify: "+r.Err.Error(),
				"re-sign the card after every change (even whitespace-insignificant value edits invalidate it), or give the right key")
		}
	}
}
