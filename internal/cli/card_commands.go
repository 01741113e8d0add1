package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
	"github.com/caddy-a2a/caddy-a2a/agent/validate"
	"github.com/caddy-a2a/caddy-a2a/client"
	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
)

func init() {
	registerSubcommand(addCardTrustCommands)
}

// addCardTrustCommands adds `caddy a2a card validate|verify|init` (CARD-7,
// CARD-9).
func addCardTrustCommands(root *cobra.Command) {
	parent := childCommand(root, "card", "Work with Agent Cards")
	parent.AddCommand(cardValidateCommand(), cardVerifyCommand(), cardInitCommand())
}

// cardValidateCommand is `caddy a2a card validate` (CARD-9).
func cardValidateCommand() *cobra.Command {
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
  caddy a2a card validate https://agent.example.com --probe --cert client.pem --key client.key
  caddy a2a card validate card.json --hs256-env k1=CARD_SECRET --json`,
		RunE: runE(runCardValidate),
	}
	addCardFetchFlags(val)
	vf := val.Flags()
	vf.Bool("probe", false, "also probe the live agent (URL only)")
	vf.Bool("json", false, "print the findings as a JSON array")
	vf.Bool("production", false, "treat non-HTTPS URLs as errors")
	addHeaderFlag(val, "request header 'Name: value' for fetching and probing (repeatable; credentials enable the extended card probe)")
	addClientTLSFlags(val) // AUTH-9: agents behind mutual TLS
	return val
}

// cardVerifyCommand is `caddy a2a card verify` (CARD-7).
func cardVerifyCommand() *cobra.Command {
	ver := &cobra.Command{
		Use:   "verify FILE|URL",
		Short: "Verify an Agent Card's JWS signatures (at least one must verify)",
		Long: `Verifies the card's signatures with the keys given: HS256 secrets from
environment variables (--hs256-env kid=VAR), key files (--verify-key
[KID=]FILE: a PEM public key or a JWKS), a local JWKS file (--jwks-file), a
remote JWKS (--jwks-url), or the jku of the card's own header when its
origin is allowed (--allow-jku https://keys.example.com). A card cannot vouch
for itself: a jku outside the allow-list is never fetched.
Exit codes: 0 at least one signature verifies, 1 none does, 2 usage error.`,
		RunE: runE(runCardVerify),
	}
	addCardFetchFlags(ver)
	ver.Flags().Bool("json", false, "print one JSON result per signature")
	return ver
}

// addCardFetchFlags adds the trust flags and the per-exchange --timeout of
// the card commands.
func addCardFetchFlags(cmd *cobra.Command) {
	addTrustFlags(cmd)
	cmd.Flags().Duration("timeout", validate.DefaultTimeout, "timeout of each HTTP exchange")
}

// verifierFromFlags builds the verifier of the trust flags for the card
// raw; nil when no key source is given.
func verifierFromFlags(cmd *cobra.Command, raw []byte) (*jws.Verifier, error) {
	timeout, _ := cmd.Flags().GetDuration("timeout")
	t, err := trustFromFlags(cmd, timeout)
	if err != nil || t.Empty() {
		return nil, err
	}
	return t.Verifier(raw)
}

// loadCardArg reads a card from a file, stdin ("-") or a URL.
func loadCardArg(ctx context.Context, arg string, opts validate.FetchOptions) ([]byte, error) {
	if isURLArg(arg) {
		u, err := cardfetch.CardURL(arg)
		if err != nil {
			u = arg // validate.Fetch reports it
		}
		b, err := validate.Fetch(ctx, u, opts)
		if err != nil {
			return nil, usagef("%v", err)
		}
		return b, nil
	}
	var b []byte
	var err error
	if arg == "-" {
		// One byte over the limit, so the validator reports the size.
		b, err = io.ReadAll(io.LimitReader(os.Stdin, jws.MaxCardBytes+1))
	} else {
		b, err = client.ReadFileLimited(arg, jws.MaxCardBytes)
	}
	if err != nil {
		return nil, usagef("reading the card: %v", err)
	}
	return b, nil
}

// commandContext is the command's context, or Background outside Execute.
func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

func runCardValidate(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 1, 1); err != nil {
		return err
	}
	f := cmd.Flags()
	probe, _ := f.GetBool("probe")
	prod, _ := f.GetBool("production")
	timeout, _ := f.GetDuration("timeout")
	if probe && !isURLArg(args[0]) {
		return usagef("--probe needs a URL, not a file")
	}
	header, err := headerFromFlags(cmd)
	if err != nil {
		return err
	}
	if _, err := trustFromFlags(cmd, timeout); err != nil {
		return err // flag errors before any network use
	}
	hc, err := clientFromTLSFlags(cmd, timeout)
	if err != nil {
		return err
	}
	ctx := commandContext(cmd)
	fo := validate.FetchOptions{Timeout: timeout, Header: header, Client: hc}
	raw, err := loadCardArg(ctx, args[0], fo)
	if err != nil {
		return err
	}
	v, err := verifierFromFlags(cmd, raw)
	if err != nil {
		return err
	}
	findings := validate.Card(raw, validate.Options{Production: prod, Verifier: v, Context: ctx})
	if probe {
		findings = append(findings, validate.Probe(ctx, raw, validate.ProbeOptions{FetchOptions: fo, Credentials: hasCredentials(header)})...)
	}
	return printFindings(cmd, findings)
}

// printFindings prints the findings of `card validate` (one line each, or
// a JSON array with --json); errors among them exit 1.
func printFindings(cmd *cobra.Command, findings []validate.Finding) error {
	asJSON, _ := cmd.Flags().GetBool("json")
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
		return exitWith(1, fmt.Errorf("card validation failed: %d error(s), %d warning(s)", errs, warns))
	}
	if !asJSON {
		fmt.Fprintf(out, "ok: no errors, %d warning(s)\n", warns)
	}
	return nil
}

func runCardVerify(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 1, 1); err != nil {
		return err
	}
	timeout, _ := cmd.Flags().GetDuration("timeout")
	asJSON, _ := cmd.Flags().GetBool("json")
	t, err := trustFromFlags(cmd, timeout)
	if err != nil {
		return err
	}
	if t.Empty() {
		return usagef("give at least one key source: --hs256-env, --verify-key, --jwks-file, --jwks-url or --allow-jku")
	}
	ctx := commandContext(cmd)
	raw, err := loadCardArg(ctx, args[0], validate.FetchOptions{Timeout: timeout})
	if err != nil {
		return err
	}
	v, err := t.Verifier(raw)
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
			continue
		}
		line := fmt.Sprintf("signatures[%d] kid=%q alg=%s: %s", r.Index, r.Header.Kid, r.Header.Alg, status)
		if msg != "" {
			line += " (" + msg + ")"
		}
		fmt.Fprintln(out, line)
	}
	if verr != nil {
		return exitWith(1, fmt.Errorf("card signature not verified: %v", verr))
	}
	return nil
}
