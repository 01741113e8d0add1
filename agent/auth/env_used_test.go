package auth

import (
	"reflect"
	"strings"
	"testing"
)

// The environment variables that enable auth are named, never their
// values, and only those a configuration actually takes.
func TestEnvUsedNamesVariables(t *testing.T) {
	env := map[string]string{EnvToken: "tok-s3cret", EnvAPIKey: "key-s3cret", EnvBasicUsername: "u"}
	getenv := func(k string) string { return env[k] }
	got := Config{}.EnvUsed(getenv)
	want := []string{EnvToken + " (bearer token of principal default)", EnvAPIKey + " (API key of principal default)"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("EnvUsed = %q, want %q", got, want)
	}
	if strings.Contains(strings.Join(got, " "), "s3cret") {
		t.Fatal("a value leaked")
	}
	if got := (Config{Token: "set", DefaultPrincipal: "ops"}).EnvUsed(getenv); !reflect.DeepEqual(got, []string{EnvAPIKey + " (API key of principal ops)"}) {
		t.Fatalf("with a token set: %q", got)
	}
	if got := (Config{NoEnv: true}).EnvUsed(getenv); got != nil {
		t.Fatalf("no_env: %q", got)
	}
}
