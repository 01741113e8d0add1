package push

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// HeaderNotificationJWT carries the signed token of a delivery (PUSH-8).
const HeaderNotificationJWT = "X-A2A-Notification-JWT"

// MaxNotificationTTL caps the lifetime of a notification token.
const MaxNotificationTTL = 5 * time.Minute

// NotificationSigner signs deliveries (PUSH-8): every POST carries a JWT
// naming the gateway (iss), the callback (aud), the delivery (jti: the
// stable delivery id, so a receiver rejects replays), the task and the
// SHA-256 of the exact body, signed with the first key; all the keys'
// public halves are published as a JWKS, so a receiver verifies without a
// shared secret and keys rotate by adding the new one first.
type NotificationSigner struct {
	issuer  string
	ttl     time.Duration
	signers []*jws.Signer
}

// NewNotificationSigner returns a signer issuing tokens as issuer (the
// gateway's public URL, an absolute http(s) URL) valid for ttl (default
// and at most MaxNotificationTTL), signed with signers[0]; the others are
// published only (rotation). HS256 keys are refused: receivers must verify
// with public keys.
func NewNotificationSigner(issuer string, ttl time.Duration, signers []*jws.Signer) (*NotificationSigner, error) {
	if len(signers) == 0 {
		return nil, errors.New("push sign: at least one key is required")
	}
	for _, s := range signers {
		if s.Alg() == jws.AlgHS256 {
			return nil, fmt.Errorf("push sign %q: use es256 or eddsa (receivers verify with the published public key)", s.KID())
		}
	}
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return nil, errors.New("push sign: the issuer must be the gateway's absolute http(s) URL (set card public_url or push sign issuer)")
	}
	if ttl <= 0 || ttl > MaxNotificationTTL {
		if ttl > MaxNotificationTTL {
			return nil, fmt.Errorf("push sign: ttl must be at most %s", MaxNotificationTTL)
		}
		ttl = MaxNotificationTTL
	}
	return &NotificationSigner{issuer: issuer, ttl: ttl, signers: signers}, nil
}

// Signers returns the keys, the signing one first (for the JWKS).
func (n *NotificationSigner) Signers() []*jws.Signer { return n.signers }

// notificationClaims are the claims of a delivery token.
type notificationClaims struct {
	Issuer     string `json:"iss"`
	Audience   string `json:"aud"`
	IssuedAt   int64  `json:"iat"`
	Expires    int64  `json:"exp"`
	ID         string `json:"jti"`
	TaskID     string `json:"taskId"`
	BodySHA256 string `json:"body_sha256"`
}

// Token returns the signed token of one attempt of d at now.
func (n *NotificationSigner) Token(d Delivery, now time.Time) (string, error) {
	sum := sha256.Sum256(d.Body)
	claims, err := json.Marshal(notificationClaims{
		Issuer: n.issuer, Audience: d.URL,
		IssuedAt: now.Unix(), Expires: now.Add(n.ttl).Unix(),
		ID: d.ID, TaskID: d.TaskID, BodySHA256: hex.EncodeToString(sum[:]),
	})
	if err != nil {
		return "", err
	}
	return n.signers[0].SignJWT(claims)
}
