package main

import (
	"fmt"
	"io"
	"net/http"
)

// card measures Agent Card GETs, full and conditional (304).
func (r *runner) card() []result {
	c := newClient(1)
	resp, err := c.Get(r.fast + "/.well-known/agent-card.json")
	if err != nil {
		return []result{{name: "card", extra: "error: " + err.Error()}}
	}
	etag := resp.Header.Get("ETag")
	resp.Body.Close()
	get := func(inm string) func(c *http.Client, _, _ int) error {
		return func(c *http.Client, _, _ int) error {
			req, _ := http.NewRequest(http.MethodGet, r.fast+"/.well-known/agent-card.json", nil)
			if inm != "" {
				req.Header.Set("If-None-Match", inm)
			}
			resp, err := c.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			want := 200
			if inm != "" {
				want = 304
			}
			if resp.StatusCode != want {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		}
	}
	full := r.drive("card GET (200)", r.concurrency, r.duration, noTurns(get("")))
	full.ratioTo = []string{"baseline: Caddy respond"}
	cond := r.drive("card GET If-None-Match (304)", r.concurrency, r.duration, noTurns(get(etag)))
	cond.ratioTo = []string{"baseline: Caddy respond"}
	return []result{full, cond}
}
