package client

import (
	"encoding/base64"
	"encoding/json"
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

// sentIn reports whether h, the headers of a request, carries a
// credential: Auth's, or one given as a plain header (-H).
func (a Auth) sentIn(h http.Header) bool {
	name := a.APIKeyHeader
	if name == "" {
		name = authenv.DefaultAPIKeyHeader
	}
	return a.Token != "" || a.BasicUser != "" || a.APIKey != "" || h.Get("Authorization") != "" || h.Get(name) != ""
}

// credentialHint is suggested only when no credential was sent.
const credentialHint = "pass --token, --basic or --api-key (or the IACCODE_A2A_* variables)"

// authError turns 401/403 into an auth error that says what happened
// (nil for another status): a 401 rejected the credential sent, or found
// none; a 403 is the agent's limits (AUTH-6, the only source of 403)
// refusing this caller the method, which the error body names. sent says
// whether the request carried a credential; body is the answer's (its
// error message is quoted, bounded), nil when unread.
func authError(code int, header http.Header, sent bool, body []byte) error {
	switch code {
	case http.StatusUnauthorized:
		var schemes []string
		for _, ch := range header.Values("WWW-Authenticate") {
			if f := strings.Fields(ch); len(f) > 0 {
				schemes = append(schemes, f[0])
			}
		}
		return unauthenticated("HTTP 401", strings.Join(schemes, " or "), sent)
	case http.StatusForbidden:
		return denied("HTTP 403", bodyMessage(body), sent)
	}
	return nil
}

// unauthenticated is the error of a refused authentication; asks is the
// scheme the server asks for, if known.
func unauthenticated(status, asks string, sent bool) error {
	msg := "authentication failed (" + status + "): "
	if sent {
		msg += "the credential was rejected"
	} else {
		msg += "no credential was sent"
	}
	if asks != "" {
		msg += "; the server asks for " + asks
	}
	if !sent {
		msg += "; " + credentialHint
	}
	return &Error{Kind: KindAuth, Msg: msg}
}

// denied is the error of a method the agent's limits refuse this caller;
// why is the server's message ("This caller may not use SendMessage"), ""
// when the answer had none (a 403 from something else than the agent).
func denied(status, why string, sent bool) error {
	msg := "access denied (" + status + ")"
	if why != "" {
		// The error body of an A2A server: a caddy-a2a gateway answers
		// 403 only for its limits.
		msg += ": not allowed by the agent's limits: " + why
	}
	if !sent {
		msg += "; to call as a principal the limits allow, " + credentialHint
	}
	return &Error{Kind: KindAuth, Msg: msg}
}

// bodyMessage is error.message of a JSON-RPC or HTTP+JSON error body, on
// one line and at most 200 bytes; "" when there is none.
func bodyMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	m := strings.Join(strings.Fields(e.Error.Message), " ")
	if len(m) > 200 {
		m = m[:200]
	}
	return m
}
