#!/usr/bin/env bash
# Test agent for tests/turn_events_test.go (TURN-7, Appendix A): reads one
# turn request line on stdin (per_turn) and emits turn-event protocol v1
# lines on stdout. The prompt picks the behaviour.
emit() { printf '%s\n' "$1"; }

# bytes N: N bytes 0, 1, …, 255, 0, … (the test computes the same bytes).
bytes() {
	local i
	for ((i = 0; i < $1; i++)); do
		printf "\\$(printf '%03o' $((i % 256)))"
	done
}

IFS= read -r line || exit 1
case "$line" in
*raw-small*)
	emit '{"v":1,"type":"text","text":"small raw part"}'
	emit "{\"v\":1,\"type\":\"artifact\",\"artifactId\":\"small\",\"name\":\"small.bin\",\"parts\":[{\"raw\":\"$(bytes 16 | base64 | tr -d '\n')\",\"mediaType\":\"application/octet-stream\",\"filename\":\"small.bin\"}]}"
	emit '{"v":1,"type":"end","outcome":"completed","text":"done"}'
	;;
*raw-large*)
	emit '{"v":1,"type":"text","text":"large raw part"}'
	emit "{\"v\":1,\"type\":\"artifact\",\"artifactId\":\"large\",\"name\":\"large.bin\",\"parts\":[{\"raw\":\"$(bytes 300 | base64 | tr -d '\n')\",\"mediaType\":\"image/png\",\"filename\":\"large.png\"}]}"
	emit '{"v":1,"type":"end","outcome":"completed","text":"done"}'
	;;
*not-json*)
	emit '{"v":1,"type":"text","text":"before the bad line"}'
	emit 'Traceback: secret-backend-output at /srv/secret/path'
	;;
*bad-part*)
	emit '{"v":1,"type":"artifact","artifactId":"bad","parts":[{"text":"secret-backend-output","url":"https://example.com/"}]}'
	emit '{"v":1,"type":"end","outcome":"completed"}'
	;;
*)
	emit '{"v":1,"type":"end","outcome":"input_required","text":"unknown prompt"}'
	;;
esac
