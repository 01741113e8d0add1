package cli

import (
	"net/http"
	"net/textproto"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/net/http/httpguts"

	"github.com/caddy-a2a/caddy-a2a/client"
)

// addCommonFlags adds the connection, auth, output and card trust flags of
// every network command (CLI-1).
func addCommonFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("token", "", "bearer token (default $"+"IACCODE_A2A_HTTP_TOKEN)")
	f.String("basic", "", "HTTP Basic credentials user:pass (default $IACCODE_A2A_BASIC_USERNAME/PASSWORD)")
	f.String("api-key", "", "API key (default $IACCODE_A2A_API_KEY)")
	f.String("api-key-header", "", "API key header (default $IACCODE_A2A_API_KEY_HEADER, else X-API-Key)")
	addHeaderFlag(cmd, "extra request header 'Name: value' (repeatable)")
	f.Duration("timeout", 0, "give up after this long (e.g. 30s; 0: no limit)")
	f.Bool("json", false, "machine output: one JSON document per line")
	f.String("binding", "", "force the protocol binding: jsonrpc, rest, grpc, grpc-jsonrpc or websocket (default: the card's first JSON-RPC or HTTP+JSON interface)")
	f.String("namespace", client.DefaultNamespace, "metadata namespace of the gateway")
	addTrustFlags(cmd)
}

// addHeaderFlag adds -H/--header; headerFromFlags parses it.
func addHeaderFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().StringArrayP("header", "H", nil, usage)
}

// addTrustFlags adds the one set of card signature flags (CARD-7, CLI-1),
// shared by `card verify`, `card validate` and every network command.
// --jwks is the older spelling of --jwks-url/--jwks-file, still accepted.
func addTrustFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArray("hs256-env", nil, "HS256 key as kid=ENV_VAR; the secret is read from the environment variable (repeatable)")
	f.StringArray("verify-key", nil, "trusted key file [KID=]FILE: a PEM public key or a JWKS (repeatable)")
	f.StringArray("jwks-file", nil, "local JWKS file of trusted keys (repeatable)")
	f.StringArray("jwks-url", nil, "remote JWKS URL of trusted keys (repeatable)")
	f.StringArray("allow-jku", nil, "origin (scheme://host[:port]) whose jku URLs may be fetched (repeatable)")
	f.StringArray("jwks", nil, "JWKS URL or file (same as --jwks-url or --jwks-file)")
	_ = f.MarkHidden("jwks")
}

// trustFromFlags reads the card trust flags; keyTimeout bounds each key
// download (0: the client default).
func trustFromFlags(cmd *cobra.Command, keyTimeout time.Duration) (client.Trust, error) {
	f := cmd.Flags()
	t := client.Trust{Timeout: keyTimeout}
	t.KeyFiles, _ = f.GetStringArray("verify-key")
	t.JWKSFiles, _ = f.GetStringArray("jwks-file")
	t.JWKSURLs, _ = f.GetStringArray("jwks-url")
	t.AllowJKU, _ = f.GetStringArray("allow-jku")
	jwks, _ := f.GetStringArray("jwks")
	for _, j := range jwks {
		if isURLArg(j) {
			t.JWKSURLs = append(t.JWKSURLs, j)
		} else {
			t.JWKSFiles = append(t.JWKSFiles, j)
		}
	}
	hs, _ := f.GetStringArray("hs256-env")
	for _, e := range hs {
		kid, env, ok := strings.Cut(e, "=")
		if !ok || kid == "" || env == "" {
			return t, usagef("--hs256-env %q: want kid=ENV_VAR", e)
		}
		secret := os.Getenv(env)
		if secret == "" {
			return t, usagef("--hs256-env: environment variable %s is empty", env)
		}
		t.HS256 = append(t.HS256, client.HS256Secret{KID: kid, Secret: []byte(secret)})
	}
	return t, nil
}

// headerFromFlags parses -H/--header 'Name: value' (repeatable): the name
// must be an HTTP token and the value free of control characters, so no
// flag can split or smuggle a header.
func headerFromFlags(cmd *cobra.Command) (http.Header, error) {
	hs, _ := cmd.Flags().GetStringArray("header")
	h := http.Header{}
	for _, e := range hs {
		k, v, ok := strings.Cut(e, ":")
		if !ok {
			return nil, usagef("--header without ':': want 'Name: value'")
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, usagef("--header %q: want 'Name: value' with a valid header name", k)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return nil, usagef("--header %s: the value holds control characters", k)
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(k), v)
	}
	return h, nil
}

// hasCredentials reports whether h carries credentials (Authorization, or a
// name with "key" or "token" in it).
func hasCredentials(h http.Header) bool {
	for k := range h {
		lk := strings.ToLower(k)
		if lk == "authorization" || strings.Contains(lk, "key") || strings.Contains(lk, "token") {
			return true
		}
	}
	return false
}

// isURLArg reports whether s is an http(s) URL rather than a file name.
func isURLArg(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// checkArgs checks the positional argument count (max < 0: no limit).
func checkArgs(cmd *cobra.Command, args []string, min, max int) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return usagef("usage: %s", cmd.UseLine())
	}
	return nil
}

// commonFromFlags reads the flags of addCommonFlags.
func commonFromFlags(cmd *cobra.Command, target string) (Common, error) {
	f := cmd.Flags()
	o := Common{Target: target}
	o.UserAgent = "caddy-a2a-client/1.0"
	auth, err := authFromFlags(cmd)
	if err != nil {
		return o, err
	}
	o.Auth = auth
	if o.Headers, err = headerFromFlags(cmd); err != nil {
		return o, err
	}
	o.Timeout, _ = f.GetDuration("timeout")
	if o.Timeout < 0 {
		return o, usagef("--timeout must not be negative")
	}
	o.JSON, _ = f.GetBool("json")
	if f.Lookup("show-secrets") != nil {
		o.ShowSecrets, _ = f.GetBool("show-secrets")
	}
	o.Binding, _ = f.GetString("binding")
	switch strings.ToLower(o.Binding) {
	case "", client.BindingJSONRPC, client.BindingREST, "http+json", client.BindingWebSocket, client.BindingGRPC, client.BindingGRPCJSONRPC:
	default:
		return o, usagef("--binding %q: want jsonrpc, rest, grpc, grpc-jsonrpc or websocket", o.Binding)
	}
	// gRPC follows the card's scheme: h2c for an http:// agent (XPORT-2).
	o.GRPCPlaintext = strings.HasPrefix(strings.ToLower(target), "http://")
	o.Namespace, _ = f.GetString("namespace")
	if o.Trust, err = trustFromFlags(cmd, 0); err != nil {
		return o, err
	}
	if _, err := client.CardURL(target); err != nil {
		return o, err
	}
	return o, nil
}

// authFromFlags reads --token, --basic, --api-key and --api-key-header,
// defaulting to the IACCODE_A2A_* variables.
func authFromFlags(cmd *cobra.Command) (client.Auth, error) {
	f := cmd.Flags()
	tok, _ := f.GetString("token")
	basic, _ := f.GetString("basic")
	key, _ := f.GetString("api-key")
	keyHeader, _ := f.GetString("api-key-header")
	if tok != "" && basic != "" {
		return client.Auth{}, usagef("--token and --basic both set the Authorization header; give one")
	}
	a := client.Auth{Token: tok, APIKey: key, APIKeyHeader: keyHeader}
	if basic != "" {
		u, p, ok := strings.Cut(basic, ":")
		if !ok || u == "" {
			return client.Auth{}, usagef("--basic wants user:pass")
		}
		a.BasicUser, a.BasicPassword = u, p
	}
	return client.AuthFromEnv(a, os.Getenv), nil
}
