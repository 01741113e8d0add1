package validate

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// signatures checks the shape of each card signature and, with
// Options.Verifier, verifies them.
func (c *checker) signatures(raw []byte, card map[string]any) {
	sigs, present := card["signatures"]
	if !present {
		return
	}
	arr, ok := sigs.([]any)
	if !ok {
		c.add(Error, "/signatures", "signatures is not an array", `use [{"protected": …, "signature": …}]`)
		return
	}
	for i, s := range arr {
		m, ok := s.(map[string]any)
		p, _ := str(m, "protected")
		sg, _ := str(m, "signature")
		if !ok || p == "" || sg == "" {
			c.add(Error, Pointer("signatures", i), "signature entry needs protected and signature", "re-sign the card")
			continue
		}
		if _, err := jws.ParseHeader(p); err != nil {
			c.add(Error, Pointer("signatures", i, "protected"), "protected header: "+err.Error(), "re-sign with alg, kid and typ \"JOSE\" in the protected header")
		}
	}
	if c.opts.Verifier == nil {
		if len(arr) > 0 {
			c.add(Info, "/signatures", "signatures not checked (no keys given)", "pass --hs256-env kid=VAR, --jwks-file, --jwks-url or --allow-jku to verify them")
		}
		return
	}
	ctx := c.opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	results, err := c.opts.Verifier.VerifyCard(ctx, raw)
	if err != nil && len(results) == 0 {
		c.add(Error, "/signatures", "signatures cannot be verified: "+err.Error(), "re-sign the card after its last change")
		return
	}
	sev := Error
	if err == nil {
		sev = Warning // another signature verified (e.g. a rotated key)
	}
	for _, r := range results {
		if r.Err != nil {
			c.add(sev, Pointer("signatures", r.Index), "signature does not verify: "+r.Err.Error(),
				"re-sign the card after every change (even whitespace-insignificant value edits invalidate it), or give the right key")
		}
	}
}
