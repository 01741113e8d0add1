# caddy-a2a — common tasks. `make run` starts the gateway on
# http://127.0.0.1:8080 with Caddyfile.example; `make test` runs every check.

GO       ?= go
BIN      ?= bin/caddy

.PHONY: build build-dev run test test-e2e-race vet fmt-check bench profile-turn clean

# What the binary is built from: a change to any of these rebuilds it on
# `make run` (tests and the load harness are not compiled in).
SOURCES := $(shell find . -name '*.go' -not -name '*_test.go' -not -path './tests/*' \
	-not -path './.git/*' -not -path './node_modules/*') go.mod go.sum xcaddy.toml

## build: build bin/caddy from xcaddy.toml with the xcaddy library, always
## (the same build as the README's xcaddy line; the module is labelled with
## the commit's tag or pseudo-version)
build:
	@echo "make: building $(BIN) with xcaddy (the first build takes several minutes; later ones reuse the Go caches)"
	$(GO) run ./cmd/xbuild -manifest xcaddy.toml -output $(BIN)

# The binary of `make run`: rebuilt only when a source is newer.
$(BIN): $(SOURCES)
	@$(MAKE) --no-print-directory build

## build-dev: quick build with the module's own go.mod (no xcaddy)
build-dev:
	$(GO) build -o $(BIN) ./cmd/caddy

## run: build bin/caddy if a source changed since, then run the gateway
## with Caddyfile.example
run: $(BIN)
	./$(BIN) run --config Caddyfile.example --adapter caddyfile

vet:
	$(GO) vet ./...

fmt-check:
	@out="$$(find . -name '*.go' -not -path './.git/*' -not -path './node_modules/*' | xargs gofmt -l)"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## test: vet, gofmt check, every test with -race, then the tests that
## -race excludes (//go:build !race: the heap budget, RPC-6; the parked
## turn's stack, issue 17) without it.
## Caddy's XDG dirs point at a temp dir made for the run and removed after
## it; the exit status is the tests'. ./tests/ (the end-to-end tests, the
## longest package) is listed first so that go test builds and starts it
## first and runs the other packages beside it, not before it.
test: vet fmt-check
	@tmp="$$(mktemp -d)" || exit 1; \
	XDG_CONFIG_HOME="$$tmp/config" XDG_DATA_HOME="$$tmp/data" \
		$(GO) test -race -count=1 ./tests/ ./... && \
	XDG_CONFIG_HOME="$$tmp/config" XDG_DATA_HOME="$$tmp/data" \
		$(GO) test -count=1 -run '^(TestIdleContextHeap|TestIdleTurnStackIsSmall)$$' ./agent/; \
	status=$$?; rm -rf "$$tmp"; exit $$status

## test-e2e-race: the concurrency-heavy end-to-end tests (streams, reload,
## cross-instance cancel and subscribe, push under kill, WebSocket) against
## a gateway built with -race (A2A_E2E_RACE=1): a data race in the real
## process fails the test. .ci/run calls it after `make test`.
E2E_RACE_TESTS ?= ^(TestOpsReloadDuringStreamingTurn|TestGRPCStreamOutlivesReload|TestStreamResumeLastEventID|TestSubscribeRunningTaskCanceled|TestWebSocketBinding|TestRedisCancelAcrossInstances|TestRedisSubscribeAcrossInstances|TestRedisResumeOnOtherInstance|TestPushCrashSafety|TestPushTwoGatewaysOneGroup)$$
test-e2e-race:
	@tmp="$$(mktemp -d)" || exit 1; \
	A2A_E2E_RACE=1 XDG_CONFIG_HOME="$$tmp/config" XDG_DATA_HOME="$$tmp/data" \
		$(GO) test -count=1 -timeout 15m -run '$(E2E_RACE_TESTS)' ./tests/; \
	status=$$?; rm -rf "$$tmp"; exit $$status

## bench: the load harness (gateway vs same-run baselines → docs/benchmarks.md)
## and the Go micro-benchmarks of the hot paths
bench:
	$(GO) run ./tests/bench -duration 5s -concurrency 32 -list-sizes 1000,100000,1000000
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkIdleStreams$$' -benchmem -benchtime 2s ./agent/ ./agent/store/ ./push/
	# b.N open streams: a fixed count, not a time (a time would open more than the fd limit).
	$(GO) test -run '^$$' -bench '^BenchmarkIdleStreams$$' -benchmem -benchtime 2000x ./agent/

## profile-turn: where the CPU of a durable SendMessage goes, by component
profile-turn:
	tests/tools/turn-profile.sh 5s

clean:
	rm -rf bin
