package client

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/authenv"
)

// Auth holds the credentials the client sends. Empty fields are not sent.
type Auth struct {
	// Token is sent as "Authorization: Bearer <token>".
	Token string
	// BasicUser and BasicPassword are sent as HTTP Basic credentials.
	BasicUser     string
	BasicPassword string
	// APIKey is sent in the APIKeyHeader header (default X-API-Key).
	APIKey       string
	APIKeyHeader string
}

// AuthFromEnv fills the unset fields of a from the same IACCODE_A2A_*
// variables the server reads.
func AuthFromEnv(a Auth, getenv func(string) string) Auth {
	if getenv == nil {
		getenv = os.Getenv
	}
	explicit := a.Token != "" || a.BasicUser != "" || a.APIKey != ""
	if !explicit {
		a.Token = getenv(authenv.Token)
		a.BasicUser = getenv(authenv.BasicUsername)
		a.BasicPassword = getenv(authenv.BasicPassword)
		a.APIKey = getenv(authenv.APIKey)
	}
	if a.APIKeyHeader == "" {
		a.APIKeyHeader = getenv(authenv.APIKeyHeader)
	}
	if a.APIKeyHeader == "" {
		a.APIKeyHeader = authenv.DefaultAPIKeyHeader
	}
	return a
}

// apply sets the credential headers on h.
func (a Auth) apply(h http.Header) {
	switch {
	case a.Token != "":
		h.Set("Authorization", "Bearer "+a.Token)
	case a.BasicUser != "":
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(a.BasicUser+":"+a.BasicPassword)))
	}
	if a.APIKey != "" {
		name := a.APIKeyHeader
		if name == "" {
			name = authenv.DefaultAPIKeyHeader
		}
		h.Set(name, a.APIKey)
	}
}

// authError turns 401/403 into an auth error naming the challenge scheme.
func authError(code int, header http.Header) error {
	if code != http.StatusUnauthorized && code != http.StatusForbidden {
		return nil
	}
	msg := fmt.Sprintf("authentication failed (HTTP %d)", code)
	if code == http.StatusForbidden {
		msg = "access denied (HTTP 403)"
	}
	var schemes []string
	for _, ch := range header.Values("WWW-Authenticate") {
		if f := strings.Fields(ch); len(f) > 0 {
			schemes = append(schemes, f[0])
		}
	}
	if len(schemes) > 0 {
		msg += ": the server asks for " + strings.Join(schemes, " or ")
	}
	msg += "; pass --token, --basic or --api-key (or the IACCODE_A2A_* variables)"
	return &Error{Kind: KindAuth, Msg: msg}
}
