package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// sendMessage measures SendMessage on the echo backend.
func (r *runner) sendMessage() []result {
	go r.saveProfiles("send", fmt.Sprintf("pprof/profile?seconds=%d", max(1, int(r.duration.Seconds())-1)))
	res := drive("SendMessage (echo, durable store, auth)", r.concurrency, r.duration, func(c *http.Client, _, _ int) error {
		// Built per send: each message has its own messageId (RPC-18).
		body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
		return expect(c, r.fast+"/", benchToken, body, "TASK_STATE_INPUT_REQUIRED")
	})
	res.ratioTo = []string{"baseline: Caddy respond", "baseline: bare net/http", jsSendBaseline}
	return append([]result{res}, r.sendMessageRedis()...)
}

// streamMessage measures SendStreamingMessage and its event rate.
func (r *runner) streamMessage() []result {
	var mu sync.Mutex
	events := 0
	go r.saveProfiles("stream", fmt.Sprintf("pprof/profile?seconds=%d", max(1, int(r.duration.Seconds())-1)))
	res := drive("SendStreamingMessage (streams)", r.concurrency, r.duration, func(c *http.Client, _, _ int) error {
		body := rpcBody("SendStreamingMessage", sendParams("Create a VPC with two vSwitches.", ""))
		resp, err := post(c, r.fast+"/", benchToken, body)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		n := 0
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		last := ""
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data: ") {
				n++
				last = line
			}
		}
		if !strings.Contains(last, "TASK_STATE_INPUT_REQUIRED") {
			return fmt.Errorf("stream did not end input-required")
		}
		mu.Lock()
		events += n
		mu.Unlock()
		return nil
	})
	res.extra = fmt.Sprintf("%.0f events/s", float64(events)/res.elapsed.Seconds())
	res.ratioTo = []string{"baseline: Caddy respond", jsStreamBaseline}
	return []result{res}
}
