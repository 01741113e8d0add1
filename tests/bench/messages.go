package main

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
)

// sendMessage measures SendMessage on the echo backend.
func (r *runner) sendMessage() []result {
	go r.saveProfiles("send", fmt.Sprintf("pprof/profile?seconds=%d", max(1, int(r.duration.Seconds())-1)))
	res := r.drive("SendMessage (echo, durable store, auth)", r.concurrency, r.duration, func(c *http.Client, _, _ int) (string, error) {
		// Built per send: each message has its own messageId (RPC-18).
		body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
		return expectTask(c, r.fast+"/", benchToken, body, "TASK_STATE_INPUT_REQUIRED", nil)
	})
	res.ratioTo = []string{"baseline: Caddy respond", "baseline: bare net/http", jsSendBaseline}
	return append([]result{res}, r.sendMessageRedis()...)
}

// sendDedupeName is the scenario that measures dedupe hits on purpose.
const sendDedupeName = dedupeHitsPrefix + "SendMessage resending one messageId (idempotent-send extension)"

// sendDedupeHits measures the answer to a resent messageId: every request
// carries the same message and opts into the idempotent-send extension,
// so after the first turn each is answered from the dedupe record (drive
// checks that every answer names that one task). Not a turn: compare it
// with nothing but itself.
func (r *runner) sendDedupeHits() []result {
	body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
	hdr := http.Header{"A2a-Extensions": {idempotentSendExt}}
	res := r.drive(sendDedupeName, r.concurrency, r.duration, func(c *http.Client, _, _ int) (string, error) {
		return expectTask(c, r.fast+"/", benchToken, body, "TASK_STATE_INPUT_REQUIRED", hdr)
	})
	res.ratioTo = []string{"SendMessage (echo, durable store, auth)"}
	return []result{res}
}

// streamMessage measures SendStreamingMessage and its event rate.
func (r *runner) streamMessage() []result {
	var mu sync.Mutex
	events := 0
	go r.saveProfiles("stream", fmt.Sprintf("pprof/profile?seconds=%d", max(1, int(r.duration.Seconds())-1)))
	res := r.drive("SendStreamingMessage (streams)", r.concurrency, r.duration, func(c *http.Client, _, _ int) (string, error) {
		body := rpcBody("SendStreamingMessage", sendParams("Create a VPC with two vSwitches.", ""))
		resp, err := post(c, r.fast+"/", benchToken, body)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		n, last := lastOfStream(resp.Body)
		if !bytes.Contains(last, []byte("TASK_STATE_INPUT_REQUIRED")) {
			return "", fmt.Errorf("stream did not end input-required")
		}
		mu.Lock()
		events += n
		mu.Unlock()
		return taskIDOf(last), nil
	})
	res.extra = fmt.Sprintf("%.0f events/s", float64(events)/res.elapsed.Seconds())
	res.ratioTo = []string{"baseline: Caddy respond", jsStreamBaseline}
	return []result{res}
}
