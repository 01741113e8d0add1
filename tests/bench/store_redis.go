package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

// sendRedisName is the SendMessage scenario over `store redis` (SCALE-1).
const sendRedisName = "SendMessage (echo, store redis, auth)"

// sendMessageRedis measures SendMessage like sendMessage, on a second
// gateway process whose a2a app uses `store redis` on a throwaway
// redis-server, so the ratio to the SQLite run is from the same run.
func (r *runner) sendMessageRedis() []result {
	fail := func(err error) []result { return []result{{name: sendRedisName, extra: "error: " + err.Error()}} }
	rg, err := r.startRedisGateway("a2a-bench-redis-", "")
	if err != nil {
		return fail(err)
	}
	defer rg.stop()
	url, addr, g := rg.url, rg.addr, rg.g
	procs := []proc{procOf("gateway", g.cmd.Process.Pid), {name: "redis", pid: redisPid(addr)}}
	res := metered(procs, func() result {
		return drive(sendRedisName, r.concurrency, r.duration, func(c *http.Client, _, _ int) (string, error) {
			// Built per send: a fresh messageId, so each request is a turn.
			body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
			return expectTask(c, url+"/", benchToken, body, "TASK_STATE_INPUT_REQUIRED", nil)
		})
	})
	res.ratioTo = []string{"SendMessage (echo, durable store, auth)", "baseline: Caddy respond"}
	return []result{res}
}

// redisGlobalOptions is the global options block of a bench gateway whose
// a2a app stores in Redis at addr under key prefix.
func redisGlobalOptions(dataDir, addr, prefix string) string {
	return fmt.Sprintf(`{
	admin off
	persist_config off
	grace_period 1s
	a2a {
		data_dir %s
		store redis {
			url redis://%s/0
			key_prefix %s
		}
	}
}
`, dataDir, addr, prefix)
}

// redisGateway is a bench gateway with `store redis` on a throwaway
// redis-server of its own.
type redisGateway struct {
	url  string   // the gateway's base URL
	addr string   // the redis-server's host:port
	g    *gateway // the gateway process
	stop func()   // stops both and removes their directory
}

// startRedisGateway starts a redis-server and a gateway storing in it, one
// site with bearer auth, the echo backend and extra (more a2a options,
// "" for none). dirPrefix names the temporary directory.
func (r *runner) startRedisGateway(dirPrefix, extra string) (*redisGateway, error) {
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	stops := []func(){func() { _ = os.RemoveAll(dir) }}
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	stopRedis, addr, err := startRedis(dir)
	if err != nil {
		stop()
		return nil, err
	}
	stops = append(stops, stopRedis)
	port, err := freePort()
	if err != nil {
		stop()
		return nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	cfg := redisGlobalOptions(filepath.Join(dir, "data"), addr, "bench:") + fmt.Sprintf(`http://127.0.0.1:%d {
	a2a {
		card {
			name bench-agent
		}
		auth {
			bearer %s
			no_env
		}
		backend echo
		max_concurrent_turns 20000
%s
	}
}
`, port, benchToken, extra)
	g, err := startGateway(r.bin, dir, cfg, url+"/health")
	if err != nil {
		stop()
		return nil, err
	}
	stops = append(stops, g.stop)
	return &redisGateway{url: url, addr: addr, g: g, stop: stop}, nil
}
