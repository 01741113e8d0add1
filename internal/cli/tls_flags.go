package cli

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// addClientTLSFlags adds --cert, --key and --cacert: a client certificate
// for agents behind mutual TLS (AUTH-9) and extra roots for a server
// certificate from a private CA.
func addClientTLSFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("cert", "", "client certificate (PEM) to present to an agent that requires mutual TLS; needs --key")
	f.String("key", "", "private key (PEM) of --cert")
	f.String("cacert", "", "extra trusted root certificates (PEM) for the agent's server certificate")
}

// clientFromTLSFlags is the HTTP client the TLS flags ask for (nil when
// none is set: the default client). Errors name the flag, not the file.
func clientFromTLSFlags(cmd *cobra.Command, timeout time.Duration) (*http.Client, error) {
	f := cmd.Flags()
	certFile, _ := f.GetString("cert")
	keyFile, _ := f.GetString("key")
	caFile, _ := f.GetString("cacert")
	if certFile == "" && keyFile == "" && caFile == "" {
		return nil, nil
	}
	if (certFile == "") != (keyFile == "") {
		return nil, usagef("--cert and --key go together")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if certFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, usagef("--cert/--key: not a PEM certificate and its private key")
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, usagef("--cacert: cannot read the file")
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--cacert: no PEM certificate in the file")
		}
		cfg.RootCAs = pool
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	// No redirects: probe credentials stay with the URLs they were given for.
	return &http.Client{Timeout: timeout, Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, nil
}
