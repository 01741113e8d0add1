package grpc

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	grpclib "google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// transportBench measures SendMessage on one Server reached through
// ServeHTTP from net/http's HTTP/2 server (how the gateway serves gRPC
// today: on Caddy's listener) or through grpc-go's own transport on a
// listener of its own (issue 29: what a dedicated `grpc { listen … }`
// would save). cpu-µs/op is the whole process (client included), so only
// the ratio of the two in one run means anything.
func transportBench(b *testing.B, native bool) {
	st, err := store.OpenSQLite(filepath.Join(b.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	hub, err := agent.NewHub(context.Background(), st)
	if err != nil {
		b.Fatal(err)
	}
	srv := New(agent.NewHandler(agent.NewService(hub, agent.Config{})), httpx.TransportConfig{}, nil)
	var addr string
	var stop func()
	if native {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		// The Call ServeHTTP builds from the HTTP request, built here
		// from the RPC's context instead.
		gs := grpclib.NewServer(grpclib.UnaryInterceptor(func(ctx context.Context, req any, _ *grpclib.UnaryServerInfo, h grpclib.UnaryHandler) (any, error) {
			return h(context.WithValue(ctx, callKey{}, agent.Call{Binding: agent.BindingGRPC, Version: "1.0", Info: new(agent.RequestInfo)}), req)
		}))
		pb.RegisterA2AServiceServer(gs, &service{s: srv})
		go func() { _ = gs.Serve(l) }()
		addr, stop = l.Addr().String(), gs.Stop
	} else {
		hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { srv.ServeHTTP(w, r, "") }))
		hs.Config.Protocols = new(http.Protocols)
		hs.Config.Protocols.SetUnencryptedHTTP2(true)
		hs.Start()
		addr, stop = strings.TrimPrefix(hs.URL, "http://"), hs.Close
	}
	conn, err := grpclib.NewClient(addr, grpclib.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close(); stop(); srv.Close(); _ = hub.Close(); _ = st.Close() })
	client := pb.NewA2AServiceClient(conn)
	ctx := v1(context.Background())
	var seq atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	cpu0 := rusageCPU()
	b.RunParallel(func(pbt *testing.PB) {
		for pbt.Next() {
			if _, err := client.SendMessage(ctx, userMessage(strconv.FormatInt(seq.Add(1), 10))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(rusageCPU()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}

func BenchmarkTransportServeHTTP(b *testing.B) { transportBench(b, false) }
func BenchmarkTransportNative(b *testing.B)    { transportBench(b, true) }

func rusageCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
