#!/usr/bin/env bash
# Breaks the CPU of a durable blocking SendMessage down by component
# (issue 29): runs agent's BenchmarkSendMessage (JSON-RPC binding, echo
# backend, SQLite with synchronous=FULL, 32 senders) under a CPU profile
# and prints each component's share of the samples (a sample can count in
# two rows only where one component calls another: the rows name where
# the time is spent, outermost first).
#
# Usage: tests/tools/turn-profile.sh [benchtime]
#        tests/tools/turn-profile.sh PROFILE   (a CPU profile of the running
#        gateway, e.g. the "send" one `BENCH_PROFILE_DIR=dir go run ./tests/bench
#        -only send` saves: the same rows plus the HTTP server's)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
bin=()
if [ -f "${1:-}" ]; then
	cp "$1" "$out/cpu"
else
	go test -run '^$' -bench '^BenchmarkSendMessage$' -benchtime "${1:-5s}" -benchmem \
		-cpuprofile "$out/cpu" -o "$out/agent.test" ./agent/ | grep '^Benchmark'
	bin=("$out/agent.test")
fi
share() { # name, focus regexp[, ignore regexp]
	local args=(-top -nodecount=1000000 -nodefraction=0 -edgefraction=0 -focus="$2")
	[ -n "${3:-}" ] && args+=(-ignore="$3")
	local line
	line="$(go tool pprof "${args[@]}" "${bin[@]}" "$out/cpu" 2>/dev/null | grep -m1 'Showing nodes accounting for' || true)"
	printf '%-48s %s\n' "$1" "$(sed -E 's/.*accounting for ([^,]+), ([0-9.]+%) of ([^ ]+) total.*/\2  (\1 of \3)/' <<<"$line")"
}
echo "component                                        share of all samples"
share "store: SQLite writer (statements + commit)" 'store\.\(\*writer\)\.run'
share "  of which the commit (WAL frames, fsync)" 'sqlite3VdbeHalt' '^$'
share "  of which the WAL fsync" 'unixSync'
share "store: WAL checkpoint (own goroutine)" 'store\.\(\*checkpointer\)'
share "store: reads (GetTask/contexts)" 'store\.\(\*SQLite\)\.(GetTask|GetContext|ListTasks)'
share "request: JSON-RPC parse + params decode" 'jsonrpc\.parseCall|jsonrpc\.ParseCall|protojson\.Decode'
share "service: SendMessage up to the turn's end" 'agent\.\(\*Service\)\.(SendMessage|start|launch)' 'store\.\(\*writer\)'
share "turn: backend run + events (echo)" 'agent\.\(\*Service\)\.runTurn' 'store\.\(\*writer\)'
share "turn: finalize (final state, store request)" 'agent\.\(\*Service\)\.finalize' 'store\.\(\*writer\)'
share "response: JSON encoding" 'appendJSON|a2a\.UseJSON|jsonrpc\.writeResult|json\.Marshal'
share "interceptors (metrics, negotiation, limits)" 'agent\.\(\*Service\)\.(countRequest|negotiateCall|countStream|limit)$' 'agent\.\(\*Service\)\.(SendMessage|start|launch|execute)'
share "garbage collection (background marking)" 'runtime\.gcBgMarkWorker'
share "allocation (mallocgc, all callers)" 'runtime\.mallocgc'
share "benchmark client (httptest request/recorder)" 'httptest\.|agent\.benchRequest'
share "turn log line (zap, one per turn)" 'agent\.\(\*Service\)\.logTurn'
share "HTTP server: connections, parsing, writes" 'net/http\.\(\*conn\)\.serve' 'caddyhttp\.\(\*Server\)\.ServeHTTP'
share "Caddy: server + route up to a2a's handlers" 'caddyhttp\.\(\*Server\)\.ServeHTTP' 'caddymodule\.'
share "a2a_auth (credential check)" 'caddymodule\.\(\*AuthHandler\)\.ServeHTTP' 'caddymodule\.\(\*AgentHandler\)'
