package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// restURL joins the interface URL, the tenant and path.
func (c *Client) restURL(path string, q url.Values) string {
	base := strings.TrimRight(c.Interface.URL, "/")
	if c.Interface.Tenant != "" {
		base += "/" + url.PathEscape(c.Interface.Tenant)
	}
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

type restStatus struct {
	Error *struct {
		Code    int             `json:"code"`
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

// restErr decodes a google.rpc.Status error body.
func restErr(method string, status int, body []byte) error {
	var st restStatus
	if json.Unmarshal(body, &st) == nil && st.Error != nil {
		e := wireToA2A(&jsonrpc.Error{Message: st.Error.Message, Data: st.Error.Details})
		e.Code = codeFromDetails(st.Error.Details, status)
		return rpcErr(method, e)
	}
	return protocolf("%s failed: HTTP %d %s", method, status, http.StatusText(status))
}

// codeFromDetails maps ErrorInfo.reason back to a JSON-RPC code.
func codeFromDetails(details json.RawMessage, status int) int {
	var ds []struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(details, &ds)
	for _, d := range ds {
		for code := -32768; code <= -32000; code++ {
			if e := (&a2a.Error{Code: code}); e.Reason() == d.Reason && d.Reason != "" {
				if d.Reason == "INTERNAL_ERROR" {
					return a2a.CodeInternalError
				}
				return code
			}
		}
	}
	switch status {
	case http.StatusNotFound:
		return a2a.CodeTaskNotFound
	case http.StatusBadRequest:
		return a2a.CodeInvalidParams
	}
	return a2a.CodeInternalError
}

func (c *Client) rest(ctx context.Context, method, verb, path string, q url.Values, body, out any) error {
	resp, err := c.send(ctx, verb, c.restURL(path, q), body, "application/a2a+json, application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := readLimited(resp.Body, MaxResponseSize)
	if err != nil {
		return transportErr(method+": reading the response", err)
	}
	if resp.StatusCode/100 != 2 {
		return restErr(method, resp.StatusCode, b)
	}
	if out == nil || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return protocolf("%s: bad response: %v", method, err)
	}
	return nil
}
