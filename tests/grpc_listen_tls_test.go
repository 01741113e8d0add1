package tests

// issue 29, XPORT-2: the dedicated gRPC listener serves TLS from the
// tls_cert/tls_key files; a plaintext client cannot talk to it.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestGRPCListenTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "grpc-listen"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPath := filepath.Join(dir, "grpc.crt")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	keyPath := trustWritePEM(t, dir, "grpc.key", key)
	listen := "127.0.0.1:" + strconv.Itoa(harness.FreePort(t))
	harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname tls-listen\n\t}\n\tauth {\n\t\tbearer "+grpcTestToken+"\n\t\tno_env\n\t}\n\tgrpc {\n\t\tlisten "+listen+
		"\n\t\ttls_cert "+certPath+"\n\t\ttls_key "+keyPath+"\n\t}\n}")
	harness.WaitListening(t, listen)

	cert, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	conn, err := grpc.NewClient(listen, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = pb.NewA2AServiceClient(conn).GetTask(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+grpcTestToken, "a2a-version", "1.0"),
		&pb.GetTaskRequest{Id: "no-such-task"})
	if code, _, info := grpcStatus(t, err); code != codes.NotFound || info.GetReason() != "TASK_NOT_FOUND" {
		t.Errorf("GetTask over TLS: %v %v, want NOT_FOUND TASK_NOT_FOUND", code, info)
	}
	// A plaintext client gets no answer from the TLS listener.
	plain := grpcRawClient(t, listen)
	short, cancel2 := context.WithTimeout(ctx, 3*time.Second)
	defer cancel2()
	if _, err := plain.GetTask(metadata.AppendToOutgoingContext(short, "authorization", "Bearer "+grpcTestToken, "a2a-version", "1.0"),
		&pb.GetTaskRequest{Id: "x"}); err == nil {
		t.Error("a plaintext call to the TLS listener succeeded")
	}
}
