#!/usr/bin/env bash
# Runs the install lines of README.md — the sh block between
# <!-- install:begin --> and <!-- install:end --> — in a fresh copy of the
# checkout's HEAD, as a newcomer would in a checkout, then checks the
# binary they build. The Go module and build caches are the user's, so a
# second run is quick.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

lines="$(awk '/<!-- install:begin -->/{on=1; next} /<!-- install:end -->/{on=0} on' "$repo/README.md" |
	awk '/^```/{code=!code; next} code')"
if [ -z "$lines" ]; then
	echo "readme-install: no sh block between the install markers of README.md" >&2
	exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/caddy-a2a"
git -C "$repo" archive HEAD | tar -x -C "$work/caddy-a2a"

echo "readme-install: running the README's install lines in $work/caddy-a2a (the first xcaddy build takes several minutes)"
start=$SECONDS
(cd "$work/caddy-a2a" && bash -euxo pipefail -c "$lines")
echo "readme-install: built in $((SECONDS - start)) s"

bin="$work/caddy-a2a/caddy"
"$bin" list-modules | grep -qx 'http.handlers.a2a' || {
	echo "readme-install: the built caddy lacks http.handlers.a2a" >&2
	exit 1
}
"$bin" list-modules --versions | grep -q '^http.handlers.a2a v' || {
	echo "readme-install: list-modules --versions shows no version for http.handlers.a2a" >&2
	exit 1
}
"$bin" version | grep -q '^caddy-a2a/v' || {
	echo "readme-install: caddy version does not start with caddy-a2a/<version>" >&2
	exit 1
}
echo "readme-install: ok"
