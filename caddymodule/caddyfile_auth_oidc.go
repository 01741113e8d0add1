package caddymodule

import (
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/auth"
)

// unmarshalJWTOIDC parses the OpenID Connect and OAuth 2.0 options of
// `jwt { … }` (AUTH-7); ok is false when opt is none of them:
//
//	jwt {
//		oidc_issuer <url>
//		discovery_timeout <duration>
//		jwks_refresh_interval <duration>
//		jwks_cache_ttl <duration>
//		jwks_max_stale <duration>
//		allow_private_networks <cidr…>
//		oauth2 {
//			token_url <url>
//			authorization_url <url>
//			device_authorization_url <url>
//			refresh_url <url>
//			metadata_url <url>
//			pkce_required
//			no_client_credentials
//			scope <name> [<description>]
//		}
//	}
func unmarshalJWTOIDC(d *caddyfile.Dispenser, j *auth.JWT, opt string) (ok bool, err error) {
	o := &j.OIDC
	switch opt {
	case "oidc_issuer":
		o.OIDCIssuer, err = oneArg(d)
	case "discovery_timeout":
		err = authDurationArg(d, "auth jwt "+opt, &o.DiscoveryTimeout)
	case "jwks_refresh_interval":
		err = authDurationArg(d, "auth jwt "+opt, &o.JWKSRefreshInterval)
	case "jwks_cache_ttl":
		err = authDurationArg(d, "auth jwt "+opt, &o.JWKSCacheTTL)
	case "jwks_max_stale":
		err = authDurationArg(d, "auth jwt "+opt, &o.JWKSMaxStale)
	case "allow_private_networks":
		o.AllowPrivateNetworks, err = restArgs(d)
	case "oauth2":
		o.OAuth2, err = unmarshalOAuth2Card(d)
	default:
		return false, nil
	}
	return true, err
}

// authDurationArg reads one Caddy duration into out.
func authDurationArg(d *caddyfile.Dispenser, what string, out *auth.Duration) error {
	v, err := oneArg(d)
	if err != nil {
		return err
	}
	dur, perr := caddy.ParseDuration(v)
	if perr != nil {
		return d.Errf("%s: invalid duration %q", what, v)
	}
	*out = auth.Duration(time.Duration(dur))
	return nil
}

// unmarshalOAuth2Card parses `oauth2 { … }` inside jwt; d is on "oauth2".
func unmarshalOAuth2Card(d *caddyfile.Dispenser) (*auth.OAuth2Card, error) {
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	o := &auth.OAuth2Card{}
	options := newBlockOptions("auth jwt oauth2", "scope")
	err := options.each(d, func(opt string) (err error) {
		switch opt {
		case "token_url":
			o.TokenURL, err = oneArg(d)
		case "authorization_url":
			o.AuthorizationURL, err = oneArg(d)
		case "device_authorization_url":
			o.DeviceAuthorizationURL, err = oneArg(d)
		case "refresh_url":
			o.RefreshURL, err = oneArg(d)
		case "metadata_url":
			o.MetadataURL, err = oneArg(d)
		case "pkce_required":
			if d.NextArg() {
				return d.ArgErr()
			}
			o.PKCERequired = true
		case "no_client_credentials":
			if d.NextArg() {
				return d.ArgErr()
			}
			o.NoClientCredentials = true
		case "scope":
			args := d.RemainingArgs()
			if len(args) < 1 || len(args) > 2 {
				return d.Err("auth jwt oauth2: usage is scope <name> [<description>]")
			}
			s := auth.OAuth2Scope{Name: args[0]}
			if len(args) == 2 {
				s.Description = args[1]
			}
			o.Scopes = append(o.Scopes, s)
		default:
			return d.Errf("auth jwt oauth2: unknown option %q", opt)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return o, validated(d, o.Validate)
}
