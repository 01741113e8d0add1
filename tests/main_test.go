// Package tests holds the end-to-end tests: they build the real caddy
// binary once (harness.Main) and talk HTTP to it.
package tests

import (
	"os"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
