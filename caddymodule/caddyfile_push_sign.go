package caddymodule

import (
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// unmarshalPushSign parses one signing key of the push block (PUSH-8);
// d is on the "sign" token:
//
//	sign es256|eddsa {
//		kid <kid>
//		key_file <pem>
//		issuer <public URL>   # once, on any key: the iss claim
//		ttl <duration>        # once: the token lifetime (≤ 5m)
//	}
func (p *PushConfig) unmarshalPushSign(d *caddyfile.Dispenser) error {
	alg, err := oneArg(d)
	if err != nil {
		return err
	}
	k := jws.SignKey{Alg: strings.ToLower(alg)} // the values: push's Validate
	options := newBlockOptions("push sign")
	if err := options.each(d, func(opt string) (err error) {
		switch opt {
		case "kid":
			k.KID, err = oneArg(d)
		case "key_file":
			k.KeyFile, err = oneArg(d)
		case "issuer":
			if p.SignIssuer != "" {
				return d.Err("push sign: issuer given twice")
			}
			p.SignIssuer, err = oneArg(d)
		case "ttl":
			if p.SignTTL != 0 {
				return d.Err("push sign: ttl given twice")
			}
			err = durationArg(d, &p.SignTTL)
		default:
			return d.Errf("push sign: unknown option %q (want kid, key_file, issuer or ttl)", opt)
		}
		return err
	}); err != nil {
		return err
	}
	p.Sign = append(p.Sign, k)
	return nil
}
