# caddy-a2a — common tasks. `make run` starts the gateway on
# http://127.0.0.1:8080 with Caddyfile.example; `make test` runs every check.

GO       ?= go
BIN      ?= bin/caddy
TMPROOT  := $(shell mktemp -d 2>/dev/null || echo /tmp/caddy-a2a-test)

.PHONY: build build-dev run test vet fmt-check bench clean

## build: build bin/caddy from xcaddy.toml with the xcaddy library
build:
	$(GO) run ./cmd/xbuild -manifest xcaddy.toml

## build-dev: quick build with the module's own go.mod (no xcaddy)
build-dev:
	$(GO) build -o $(BIN) ./cmd/caddy

## run: build and run the gateway with Caddyfile.example
run: build
	./$(BIN) run --config Caddyfile.example --adapter caddyfile

vet:
	$(GO) vet ./...

fmt-check:
	@out="$$(find . -name '*.go' -not -path './.git/*' -not -path './node_modules/*' | xargs gofmt -l)"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## test: vet, gofmt check, race tests (Caddy's XDG dirs point at temp dirs)
test: vet fmt-check
	XDG_CONFIG_HOME=$(TMPROOT)/config XDG_DATA_HOME=$(TMPROOT)/data \
		$(GO) test -race -count=1 ./...

## bench: the load harness (gateway vs same-run baselines → docs/benchmarks.md)
## and the Go micro-benchmarks of the hot paths
bench:
	$(GO) run ./tests/bench -duration 5s -concurrency 32 -list-sizes 1000,100000,1000000
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./agent/ ./agent/store/ ./push/

clean:
	rm -rf bin
