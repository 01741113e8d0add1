#!/usr/bin/env bash
# Test agent for the exec backend (tests/backends_exec_test.go). It speaks
# the turn-event protocol v1: one turn request line on stdin per turn, event
# lines on stdout. The prompt picks the behaviour. Works per_turn (stdin
# ends after the request) and per_context (one line per turn, and cancel
# lines).
# "pid N" in its texts is the process group the gateway kills: $PPID, the
# agent supervisor that leads it (OPS-7).
turns=0
emit() { printf '%s\n' "$1"; }

handle() {
	local line=$1
	case "$line" in
	*'"type":"cancel"'*) return ;; # a late cancel between turns
	esac
	turns=$((turns + 1))
	case "$line" in
	*all-events*)
		emit '{"v":1,"type":"thinking","text":"Planning the VPC."}'
		emit '{"v":1,"type":"tool","status":"started","toolUseId":"t1","name":"write_file"}'
		emit '{"v":1,"type":"tool","status":"input_delta","toolUseId":"t1","name":"write_file","delta":"{\"path\":"}'
		emit '{"v":1,"type":"tool","status":"input_complete","toolUseId":"t1","name":"write_file","input":{"path":"vpc.yaml"}}'
		emit '{"v":1,"type":"permission","toolUseId":"t1","toolName":"write_file","autoApproved":true}'
		emit '{"v":1,"type":"tool","status":"progress","toolUseId":"t1","name":"write_file","delta":"50%"}'
		emit '{"v":1,"type":"tool","status":"completed","toolUseId":"t1","name":"write_file","result":{"ok":true}}'
		emit '{"v":1,"type":"tool","status":"failed","toolUseId":"t2","name":"lint","error":{"kind":"internal","message":"lint crashed at /secret/path"}}'
		emit '{"v":1,"type":"text","text":"Here is "}'
		emit '{"v":1,"type":"text","text":"your VPC."}'
		emit '{"v":1,"type":"artifact","artifactId":"summary","name":"Summary","parts":[{"text":"2 vSwitches"},{"data":{"cidr":"10.0.0.0/8"}}]}'
		emit '{"v":1,"type":"artifact","artifactId":"template","name":"vpc.yaml","mediaType":"application/yaml","filename":"vpc.yaml","text":"ROSTemplateFormatVersion: 2015-09-01\n"}'
		emit '{"v":1,"type":"artifact","artifactId":"diagram","name":"diagram","mediaType":"image/png","filename":"diagram.png","base64":"iVBORw0KGgoAAAANSUhEUg=="}'
		emit '{"v":1,"type":"usage","inputTokens":12,"outputTokens":5,"totalTokens":17}'
		emit '{"v":1,"type":"future_event","x":1}'
		emit '{"v":1,"type":"end","outcome":"input_required","text":"Here is your VPC."}'
		;;
	*message-reply*)
		emit '{"v":1,"type":"message","text":"Direct answer.","parts":[{"data":{"k":1}}]}'
		emit '{"v":1,"type":"end","outcome":"completed"}'
		;;
	*count*)
		emit "{\"v\":1,\"type\":\"text\",\"text\":\"turn $turns pid $PPID\"}"
		emit '{"v":1,"type":"end","outcome":"input_required"}'
		;;
	*slow*)
		emit "{\"v\":1,\"type\":\"text\",\"text\":\"pid $PPID working\"}"
		# per_context: the cancel line arrives on stdin and is answered.
		if IFS= read -r -t 30 next; then
			emit '{"v":1,"type":"end","outcome":"canceled"}'
			return
		fi
		sleep 30 &
		wait $!
		emit '{"v":1,"type":"end","outcome":"input_required","text":"late"}'
		;;
	*stubborn*)
		trap '' TERM
		emit "{\"v\":1,\"type\":\"text\",\"text\":\"pid $PPID working\"}"
		while :; do
			IFS= read -r -t 30 next || sleep 1
		done
		;;
	*crash*)
		echo "crash details /very/secret/path token=abc" >&2
		exit 3
		;;
	*malformed*)
		echo 'this is not json'
		;;
	*env-check*)
		emit "{\"v\":1,\"type\":\"text\",\"text\":\"cwd=$(pwd) env=$(env | cut -d= -f1 | sort | tr '\n' ',')\"}"
		emit '{"v":1,"type":"end","outcome":"input_required"}'
		;;
	*)
		emit '{"v":1,"type":"text","text":"ok"}'
		;;
	esac
}

while IFS= read -r line; do
	handle "$line"
done
