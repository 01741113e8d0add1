package caddymodule

// CardHandler and AuthHandler are placeholders until the foundation lands.
// (Temporary file: replaced by card.go and auth.go.)
type CardHandler struct{}

// AuthHandler is a placeholder.
type AuthHandler struct{}
