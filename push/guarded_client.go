package push

import (
	"net/http"
	"time"
)

// HTTPClient returns an HTTP client that reaches only the addresses p
// allows (DialContext: public addresses, or those in Allow; checked again
// at connect time, so DNS rebinding is refused), follows no redirect and
// uses no proxy (a proxy would dial for it, past the check). Timeout
// bounds each request. Other outbound calls that take a URL from
// configuration or from the network (OpenID Connect discovery and keys,
// OAuth token endpoints) use it as their SSRF guard.
func (p *Policy) HTTPClient(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = p.DialContext
	return &http.Client{
		Timeout:       timeout,
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
