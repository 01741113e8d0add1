package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// startRedis runs a throwaway redis-server on a free loopback port.
func startRedis(dir string) (func(), string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, "", fmt.Errorf("redis-server not installed")
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }, addr, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return nil, "", fmt.Errorf("redis-server did not start")
}

// pushDeliveries measures end-to-end push throughput on each queue: turns
// with an inline push config, counted at a local receiver.
func (r *runner) pushDeliveries() []result {
	const n = 3000
	var out []result
	sites := []struct{ name, url string }{{"local outbox", r.pushLocal}}
	if r.pushRedis != "" {
		sites = append(sites, struct{ name, url string }{"Redis Streams", r.pushRedis})
	}
	for _, site := range sites {
		var got atomic.Int64
		seen := sync.Map{}
		var dups atomic.Int64
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			out = append(out, result{name: "push " + site.name, extra: "error: " + err.Error()})
			continue
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			id := req.Header.Get("X-A2A-Delivery-Id")
			if _, loaded := seen.LoadOrStore(id, true); loaded {
				dups.Add(1)
			} else {
				got.Add(1)
			}
			w.WriteHeader(http.StatusNoContent)
		})}
		go func() { _ = srv.Serve(l) }()
		hook := "http://" + l.Addr().String() + "/hook"
		cpu0 := cpuSeconds(r.gw.pid)
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		c := newClient(r.concurrency)
		errs := atomic.Int64{}
		for w := 0; w < r.concurrency; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= n {
					params := sendParams("push me", "")
					params["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook, "token": "bench"}}
					if err := expect(c, site.url+"/", "", rpcBody("SendMessage", params), "INPUT_REQUIRED"); err != nil {
						errs.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		sent := time.Since(start)
		deadline := time.Now().Add(60 * time.Second)
		for got.Load() < n-errs.Load() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		elapsed := time.Since(start)
		cpu := []cpuUse{{name: "gateway (turn + delivery)", seconds: cpuSeconds(r.gw.pid) - cpu0}}
		_ = srv.Close()
		out = append(out, result{name: "push deliveries, " + site.name + " (end to end)", requests: int(got.Load()), errors: int(errs.Load()), elapsed: elapsed, cpu: cpu,
			extra: fmt.Sprintf("%d turns sent in %.1fs; %d duplicates; includes the turns", n, sent.Seconds(), dups.Load())})
		fmt.Fprintf(os.Stderr, "push %s: %d delivered\n", site.name, got.Load())
	}
	return out
}
