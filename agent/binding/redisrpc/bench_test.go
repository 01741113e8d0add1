package redisrpc

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// BenchmarkRedisRPCSendMessage: XPORT-5 throughput — b.N SendMessage
// requests (echo backend, no delay) added at once, timed until every
// final answer is on the reply stream.
func BenchmarkRedisRPCSendMessage(b *testing.B) {
	rdb := startRedis(b)
	svc := newServiceTB(b)
	c := New(rdb, jsonrpcDispatcher(svc), Options{}, nil, nil)
	if err := c.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer c.Stop(5 * time.Second)
	pipe := rdb.Pipeline()
	for i := range b.N {
		pipe.XAdd(b.Context(), &redis.XAddArgs{Stream: DefaultRequestStream, Values: []any{
			FieldCorrelationID, fmt.Sprint(i), FieldReplyStream, replyStream,
			FieldPayload, rpcPayload(i, a2a.MethodSendMessage, sendParams(fmt.Sprint("bench ", i))),
		}})
	}
	b.ResetTimer()
	if _, err := pipe.Exec(b.Context()); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for c.Stats().Served < int64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d served", c.Stats().Served, b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
