#!/usr/bin/env bash
# A minimal turn-event agent: one turn request per line on stdin, events on
# stdout (docs/backends.md, "Turn-event protocol").
while IFS= read -r line; do
	case "$line" in *'"type":"cancel"'*) printf '%s\n' '{"v":1,"type":"end","outcome":"canceled"}'; continue ;; esac
	printf '%s\n' '{"v":1,"type":"text","text":"Working on it…"}'
	printf '%s\n' '{"v":1,"type":"end","outcome":"input_required","text":"Done."}'
done
