package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
	"github.com/caddy-a2a/caddy-a2a/agent/validate"
	"github.com/caddy-a2a/caddy-a2a/client"
)

func init() {
	registerA2ASubcommand(addCardTrustCommands)
}

// addCardTrustCommands adds `caddy a2a card validate|verify|init` (CARD-7,
// CARD-9).
func addCardTrustCommands(root *cobra.Command) {
	parent := a2aChild(root, "card", "Work with Agent Cards")

	val := &cobra.Command{
		Use:   "validate FILE|URL",
		Short: "Check an Agent Card against A2A 1.0 and print each finding with its fix",
		Long: `Validates a card file or URL (a site URL gets /.well-known/agent-card.json):
required fields, skills, descriptions, generic names, v0.x fields with their
v1.0 replacement, embedded credentials, security declarations, non-HTTPS URLs
and, with keys, signatures. --probe also checks the live agent: each
supportedInterfaces entry, declared streaming (one "ping" message is sent),
push notifications and, with --header credentials, the extended card.

Output: one line per finding "severity pointer: message — fix: …", or --json.
Exit codes: 0 no errors, 1 errors found, 2 usage error.`,
		Example: `  caddy a2a card validate agent-card.json
  caddy a2a card validate https://agent.example.com --probe -H 'Authorization: Bearer …'
  caddy a2a card validate card.json --hs256-env k1=CARD_SECRET --json`,
		RunE: a2aRunE(runCardValidate),
	}
	addTrustFlags(val)
	vf := val.Flags()
	vf.Bool("probe", false, "also probe the live agent (URL only)")
	vf.Bool("json", false, "print the findings as a JSON array")
	vf.Bool("production", false, "treat non-HTTPS URLs as errors")
	vf.StringArrayP("header", "H", nil, "request header 'Name: value' for fetching and probing (repeatable; credentials enable the extended card probe)")

	ver := &cobra.Command{
		Use:   "verify FILE|URL",
		Short: "Verify an Agent Card's JWS signatures (at least one must verify)",
		Long: `Verifies the card's signatures with the keys given: HS256 secrets from
environment variables (--hs256-env kid=VAR), a local JWKS file (--jwks-file),
a remote JWKS (--jwks-url), or the jku of the card's own header when its
origin is allowed (--allow-jku https://keys.example.com). A card cannot vouch
for itself: a jku outside the allow-list is never fetched.
Exit codes: 0 at least one signature verifies, 1 none does, 2 usage error.`,
		RunE: a2aRunE(runCardVerify),
	}
	addTrustFlags(ver)
	ver.Flags().Bool("json", false, "print one JSON result per signature")

	ini := &cobra.Command{
		Use:   "init",
		Short: "Write a valid A2A 1.0 Agent Card (JSON) or the a2a directive's card block",
		Example: `  caddy a2a card init --name "Route Planner" --description "Plans routes with live traffic." \
      --url https://agent.example.com/ --skill 'routes|Route planning|Plans driving routes with traffic.|maps,routing'
  caddy a2a card init --name "Route Planner" --format caddyfile`,
		RunE: a2aRunE(runCardInit),
	}
	f := ini.Flags()
	f.String("name", "", "agent name (required)")
	f.String("description", "", "what the agent does and when to call it (20+ characters)")
	f.String("version", card.DefaultVersion, "agent version")
	f.String("url", "", "public base URL of the agent, e.g. https://agent.example.com/ (JSON: required)")
	f.StringSlice("binding", []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON}, "protocol bindings, in preference order")
	f.String("provider-org", "", "provider organization")
	f.String("provider-url", "", "provider web site")
	f.String("documentation-url", "", "documentation URL")
	f.Bool("streaming", true, "declare streaming")
	f.StringArray("skill", nil, "skill as 'id|name|description|tag,tag' (repeatable)")
	f.StringSlice("input-modes", []string{"text/plain"}, "default input media types")
	f.StringSlice("output-modes", []string{"text/plain"}, "default output media types")
	f.String("format", "json", "json (a card) or caddyfile (the card block of the a2a directive)")
	f.StringP("output", "o", "", "write to this file instead of stdout")
	parent.AddCommand(val, ver, ini)
}

func addTrustFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArray("hs256-env", nil, "HS256 key as kid=ENV_VAR; the secret is read from the environment variable (repeatable)")
	f.StringArray("jwks-file", nil, "local JWKS file of trusted keys (repeatable)")
	f.StringArray("jwks-url", nil, "remote JWKS URL of trusted keys (repeatable)")
	f.StringArray("allow-jku", nil, "origin (scheme://host[:port]) whose jku URLs may be fetched (repeatable)")
	f.Duration("timeout", validate.DefaultTimeout, "timeout of each HTTP exchange")
}

// verifierFromFlags builds a verifier; nil when no key source is given.
func verifierFromFlags(cmd *cobra.Command) (*jws.Verifier, error) {
	f := cmd.Flags()
	hs, _ := f.GetStringArray("hs256-env")
	files, _ := f.GetStringArray("jwks-file")
	urls, _ := f.GetStringArray("jwks-url")
	jkus, _ := f.GetStringArray("allow-jku")
	timeout, _ := f.GetDuration("timeout")
	if len(hs)+len(files)+len(urls)+len(jkus) == 0 {
		return nil, nil
	}
	v := &jws.Verifier{Keys: &jws.KeySet{}, Fetch: jws.FetchOptions{Timeout: timeout}}
	for _, e := range hs {
		kid, env, ok := strings.Cut(e, "=")
		if !ok || kid == "" || env == "" {
			return nil, a2aExit(a2aExitUsage, fmt.Errorf("--hs256-env %q: want kid=ENV_VAR", e))
		}
		secret := os.Getenv(env)
		if secret == "" {
			return nil, a2aExit(a2aExitUsage, fmt.Errorf("--hs256-env: environment variable %s is empty", env))
		}
		if err := v.Keys.AddSecret(kid, []byte(secret)); err != nil {
			return nil, a2aExit(a2aExitUsage, err)
		}
	}
	for _, p := range files {
		b, err := client.ReadFileLimited(p, jws.MaxJWKSBytes)
		if err != nil {
			return nil, a2aExit(a2aExitUsage, fmt.Errorf("--jwks-file: %v", err))
		}
		ks, err := jws.ParseJWKS(b)
		if err != nil {
			return nil, a2aExit(a2aExitUsage, fmt.Errorf("--jwks-file: %v", err))
		}
		v.Keys.Add(ks.All()...)
	}
	for _, u := range urls {
		if _, err := jws.Origin(u); err != nil {
			return nil, a2aExit(a2aExitUsage, fmt.Errorf("--jwks-url: %v", err))
		}
		v.Remote = append(v.Remote, jws.NewRemoteJWKS(u, jws.FetchOptions{Timeout: timeout}))
	}
	for _, o := range jkus {
		if _, err := jws.Origin(o); err != nil {
			return nil, a2aExit(a2aExitUsage, fmt.Errorf("--allow-jku %q: %v", o, err))
		}
		v.AllowedJKUOrigins = append(v.AllowedJKUOrigins, o)
	}
	return v, nil
}

func parseHeaders(hs []string) (http.Header, bool, error) {
	h := http.Header{}
	creds := false
	for _, e := range hs {
		k, val, ok := strings.Cut(e, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, false, a2aExit(a2aExitUsage, fmt.Errorf("--header %q: want 'Name: value'", k))
		}
		h.Add(k, strings.TrimSpace(val))
		lk := strings.ToLower(k)
		if lk == "authorization" || strings.Contains(lk, "key") || strings.Contains(lk, "token") {
			creds = true
		}
	}
	return h, creds, nil
}

func isURLArg(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// loadCardArg reads a card from a file or URL.
func loadCardArg(ctx context.Context, arg string, opts validate.FetchOptions) ([]byte, error) {
	if isURLArg(arg) {
		b, err := validate.Fetch(ctx, validate.CardURL(arg), opts)
		if err != nil {
			return nil, a2aExit(a2aExitUsage, err)
		}
		return b, nil
	}
	var b []byte
	var err error
	if arg == "-" {
		b, err = io.ReadAll(io.LimitReader(os.Stdin, jws.MaxCardBytes+1))
	} else {
		b, err = client.ReadFileLimited(arg, jws.MaxCardBytes)
	}
	if err != nil {
		return nil, a2aExit(a2aExitUsage, fmt.Errorf("reading the card: %v", err))
	}
	return b, nil
}

func runCardValidate(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return a2aExit(a2aExitUsage, fmt.Errorf("usage: %s", cmd.UseLine()))
	}
	f := cmd.Flags()
	probe, _ := f.GetBool("probe")
	asJSON, _ := f.GetBool("json")
	prod, _ := f.GetBool("production")
	hs, _ := f.GetStringArray("header")
	timeout, _ := f.GetDuration("timeout")
	if probe && !isURLArg(args[0]) {
		return a2aExit(a2aExitUsage, errors.New("--probe needs a URL, not a file"))
	}
	header, creds, err := parseHeaders(hs)
	if err != nil {
		return err
	}
	v, err := verifierFromFlags(cmd)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	fo := validate.FetchOptions{Timeout: timeout, Header: header}
	raw, err := loadCardArg(ctx, args[0], fo)
	if err != nil {
		return err
	}
	findings := validate.Card(raw, validate.Options{Production: prod, Verifier: v, Context: ctx})
	if probe {
		findings = append(findings, validate.Probe(ctx, raw, validate.ProbeOptions{FetchOptions: fo, Credentials: creds})...)
	}
	out := cmd.OutOrStdout()
	if asJSON {
		if findings == nil {
			findings = []validate.Finding{}
		}
		b, _ := json.MarshalIndent(findings, "", "  ")
		fmt.Fprintln(out, string(b))
	} else {
		for _, fd := range findings {
			fmt.Fprintln(out, fd.String())
		}
	}
	errs, warns := 0, 0
	for _, fd := range findings {
		switch fd.Severity {
		case validate.Error:
			errs++
		case validate.Warning:
			warns++
		}
	}
	if errs > 0 {
		return a2aExit(1, fmt.Errorf("card validation failed: %d error(s), %d warning(s)", errs, warns))
	}
	if !asJSON {
		fmt.Fprintf(out, "ok: no errors, %d warning(s)\n", warns)
	}
	return nil
}

func runCardVerify(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return a2aExit(a2aExitUsage, fmt.Errorf("usage: %s", cmd.UseLine()))
	}
	v, err := verifierFromFlags(cmd)
	if err != nil {
		return err
	}
	if v == nil {
		return a2aExit(a2aExitUsage, errors.New("give at least one key source: --hs256-env, --jwks-file, --jwks-url or --allow-jku"))
	}
	timeout, _ := cmd.Flags().GetDuration("timeout")
	asJSON, _ := cmd.Flags().GetBool("json")
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	raw, err := loadCardArg(ctx, args[0], validate.FetchOptions{Timeout: timeout})
	if err != nil {
		return err
	}
	results, verr := v.VerifyCard(ctx, raw)
	out := cmd.OutOrStdout()
	for _, r := range results {
		status, msg := "ok", ""
		if r.Err != nil {
			status, msg = "fail", r.Err.Error()
		}
		if asJSON {
			b, _ := json.Marshal(map[string]any{"index": r.Index, "kid": r.Header.Kid, "alg": r.Header.Alg, "ok": r.Err == nil, "error": msg})
			fmt.Fprintln(out, string(b))
		} else {
			line := fmt.Sprintf("signatures[%d] kid=%q alg=%s: %s", r.Index, r.Header.Kid, r.Header.Alg, status)
			if msg != "" {
				line += " (" + msg + ")"
			}
			fmt.Fprintln(out, line)
		}
	}
	if verr != nil {
		return a2aExit(1, fmt.Errorf("card signature not verified: %v", verr))
	}
	return nil
}

func runCardInit(cmd *cobra.Command, args []string) error {
	if len(args) != 0 {
		return a2aExit(a2aExitUsage, fmt.Errorf("usage: %s", cmd.UseLine()))
	}
	f := cmd.Flags()
	get := func(n string) string { s, _ := f.GetString(n); return s }
	cfg := card.Config{
		Name:             get("name"),
		Description:      get("description"),
		Version:          get("version"),
		DocumentationURL: get("documentation-url"),
		PublicURL:        get("url"),
	}
	cfg.InputModes, _ = f.GetStringSlice("input-modes")
	cfg.OutputModes, _ = f.GetStringSlice("output-modes")
	if org, u := get("provider-org"), get("provider-url"); org != "" || u != "" {
		cfg.Provider = &card.Provider{Organization: org, URL: u}
	}
	skills, _ := f.GetStringArray("skill")
	for _, s := range skills {
		parts := strings.Split(s, "|")
		if len(parts) != 4 {
			return a2aExit(a2aExitUsage, fmt.Errorf("--skill %q: want 'id|name|description|tag,tag'", s))
		}
		var tags []string
		for _, t := range strings.Split(parts[3], ",") {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
		cfg.Skills = append(cfg.Skills, card.Skill{ID: parts[0], Name: parts[1], Description: parts[2], Tags: tags})
	}
	if cfg.Name == "" {
		return a2aExit(a2aExitUsage, errors.New("--name is required"))
	}
	if err := cfg.Validate(); err != nil {
		return a2aExit(a2aExitUsage, fmt.Errorf("invalid card: %s", oneLine(err.Error())))
	}
	var out []byte
	switch get("format") {
	case "json":
		if cfg.PublicURL == "" {
			return a2aExit(a2aExitUsage, errors.New("--url is required for a JSON card (the interfaces' URL)"))
		}
		bindings, _ := f.GetStringSlice("binding")
		c := card.Build(&cfg, card.Runtime{BaseURL: cfg.PublicURL, Bindings: bindings})
		streaming, _ := f.GetBool("streaming")
		c.Capabilities.Streaming = a2a.Bool(streaming)
		c.Capabilities.ExtendedAgentCard = a2a.Bool(false)
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return err
		}
		out = append(b, '\n')
	case "caddyfile":
		out = []byte(caddyfileCardBlock(cfg))
	default:
		return a2aExit(a2aExitUsage, fmt.Errorf("--format %q: want json or caddyfile", get("format")))
	}
	if o := get("output"); o != "" {
		if err := os.WriteFile(o, out, 0o644); err != nil {
			return a2aExit(1, errors.New("writing the output file failed"))
		}
		return nil
	}
	_, err := cmd.OutOrStdout().Write(out)
	return err
}

// caddyfileCardBlock renders cfg as the a2a directive's card block.
func caddyfileCardBlock(c card.Config) string {
	q := func(s string) string {
		if s != "" && !strings.ContainsAny(s, " \t\"{}#") {
			return s
		}
		return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
	}
	var b strings.Builder
	b.WriteString("card {\n")
	line := func(k string, vs ...string) {
		b.WriteString("\t" + k)
		for _, v := range vs {
			b.WriteString(" " + q(v))
		}
		b.WriteString("\n")
	}
	line("name", c.Name)
	if c.Description != "" {
		line("description", c.Description)
	}
	line("version", c.Version)
	if c.Provider != nil {
		line("provider", c.Provider.Organization, c.Provider.URL)
	}
	if c.DocumentationURL != "" {
		line("documentation_url", c.DocumentationURL)
	}
	if c.PublicURL != "" {
		line("public_url", c.PublicURL)
	}
	if len(c.InputModes) > 0 {
		line("input_modes", c.InputModes...)
	}
	if len(c.OutputModes) > 0 {
		line("output_modes", c.OutputModes...)
	}
	for _, s := range c.Skills {
		b.WriteString("\tskill " + q(s.ID) + " {\n")
		b.WriteString("\t\tname " + q(s.Name) + "\n")
		b.WriteString("\t\tdescription " + q(s.Description) + "\n")
		b.WriteString("\t\ttags")
		for _, t := range s.Tags {
			b.WriteString(" " + q(t))
		}
		b.WriteString("\n\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}
