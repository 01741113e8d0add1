package tests

// Issue 28 (test time): the end-to-end tests run in parallel — each
// starts its own gateways, Redis servers and receivers on ports
// harness.FreePort hands out once, in its own temp directories, and
// spends most of its time waiting on them — except the few below, whose
// assertions bound a wall-clock time tightly enough that a busy machine
// could break them. harness.Main lets harness.DefaultParallel run at once.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// serialTests are the top-level tests that do not call t.Parallel, and why.
var serialTests = map[string]string{
	"TestReadinessRedisOutage":                    "readiness must answer 503 within 1 s of the Redis kill",
	"TestIdentityOIDCGateway":                     "a request while the provider is down must take under 2 s",
	"TestOpsShutdownFailsTurnsPastTheGracePeriod": "the exit must come within 5 s of SIGTERM (grace 1 s, shutdown 1 s)",
	"TestGRPCStreamEndsAtCredentialExpiry":        "the stream of a 3 s JWT must end within 7 s",
	"TestWebSocketCredentialExpiry":               "the streams of a 3 s JWT must end within 7 s",
	"TestRedisCrossInstanceLatency":               "the p99 of cross-instance event latency must stay under 1 s",
}

// TestEndToEndTestsRunInParallel: every top-level test of this package
// calls t.Parallel first, or is listed in serialTests with its reason.
func TestEndToEndTestsRunInParallel(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			name := fn.Name.Name
			seen[name] = true
			parallel := callsParallelFirst(fn)
			_, serial := serialTests[name]
			switch {
			case serial && parallel:
				t.Errorf("%s (%s) calls t.Parallel but is listed in serialTests", name, fset.Position(fn.Pos()))
			case !serial && !parallel:
				t.Errorf("%s (%s): call t.Parallel() first, or list it in serialTests with the reason", name, fset.Position(fn.Pos()))
			}
		}
	}
	for name := range serialTests {
		if !seen[name] {
			t.Errorf("serialTests lists %s, which does not exist", name)
		}
	}
}

// callsParallelFirst reports whether fn's first statement is t.Parallel().
func callsParallelFirst(fn *ast.FuncDecl) bool {
	if fn.Body == nil || len(fn.Body.List) == 0 {
		return false
	}
	expr, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := expr.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Parallel" && len(call.Args) == 0
}
