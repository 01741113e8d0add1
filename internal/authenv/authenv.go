// Package authenv names the environment variables that carry the
// gateway's credentials and the default API key header: the server reads
// them as defaults (agent/auth) and the client sends what they hold
// (client.AuthFromEnv), so both sides share one list without the client
// importing server code.
package authenv

// Environment variables of the credentials.
const (
	// Token is the bearer token.
	Token = "IACCODE_A2A_HTTP_TOKEN"
	// BasicUsername is the HTTP Basic user name.
	BasicUsername = "IACCODE_A2A_BASIC_USERNAME"
	// BasicPassword is the HTTP Basic password.
	BasicPassword = "IACCODE_A2A_BASIC_PASSWORD"
	// APIKey is the API key.
	APIKey = "IACCODE_A2A_API_KEY"
	// APIKeyHeader names the header the API key travels in.
	APIKeyHeader = "IACCODE_A2A_API_KEY_HEADER"
)

// DefaultAPIKeyHeader is the API key header when none is configured.
const DefaultAPIKeyHeader = "X-API-Key"
