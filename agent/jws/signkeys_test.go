package jws

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadSigners (CARD-6): configured keys become signers in order, with
// placeholders resolved, PEM files read and jku set; every mistake is a
// clear error that names neither the secret nor the key file's path.
func TestLoadSigners(t *testing.T) {
	dir := t.TempDir()
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ecPath, edPath := filepath.Join(dir, "ec.pem"), filepath.Join(dir, "ed.pem")
	if err := os.WriteFile(ecPath, pemKey(t, ecKey), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edPath, pemKey(t, edKey), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := strings.Repeat("s", MinHMACSecret)
	resolve := func(s string) string {
		return strings.NewReplacer("{env.SECRET}", secret+"\r\n", "{dir}", dir, "{env.EMPTY}", "").Replace(s)
	}
	signers, err := LoadSigners([]SignKey{
		{Alg: "HS256", KID: "hs", Secret: "{env.SECRET}"},
		{Alg: "es256", KID: "ec", KeyFile: "{dir}/ec.pem", JKU: "https://h/.well-known/jwks.json"},
		{Alg: "eddsa", KID: "ed", KeyFile: edPath},
	}, resolve)
	if err != nil {
		t.Fatal(err)
	}
	if len(signers) != 3 || signers[0].Alg() != AlgHS256 || signers[1].Alg() != AlgES256 || signers[2].Alg() != AlgEdDSA {
		t.Fatalf("signers: %+v", signers)
	}
	if signers[0].KID() != "hs" || signers[1].JKU() != "https://h/.well-known/jwks.json" || signers[2].JKU() != "" {
		t.Fatalf("kid/jku: %q %q %q", signers[0].KID(), signers[1].JKU(), signers[2].JKU())
	}
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, maxKeyFileBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		keys []SignKey
		want string
	}{
		"no kid":         {[]SignKey{{Alg: "hs256", Secret: secret}}, "card sign[0]: kid is required"},
		"duplicate kid":  {[]SignKey{{Alg: "hs256", KID: "k", Secret: secret}, {Alg: "hs256", KID: "k", Secret: secret}}, "duplicate kid"},
		"hs256 key_file": {[]SignKey{{Alg: "hs256", KID: "k", KeyFile: ecPath}}, "hs256 takes a secret"},
		"es256 secret":   {[]SignKey{{Alg: "es256", KID: "k", Secret: secret}}, "es256 takes a key_file"},
		"empty secret":   {[]SignKey{{Alg: "hs256", KID: "k", Secret: "{env.EMPTY}"}}, "secret is empty"},
		"short secret":   {[]SignKey{{Alg: "hs256", KID: "k", Secret: "short"}}, "card sign:"},
		"no key_file":    {[]SignKey{{Alg: "eddsa", KID: "k"}}, "key_file is required"},
		"missing file":   {[]SignKey{{Alg: "es256", KID: "k", KeyFile: filepath.Join(dir, "nope.pem")}}, "the file does not exist"},
		"large file":     {[]SignKey{{Alg: "es256", KID: "k", KeyFile: big}}, "larger than"},
		"wrong key type": {[]SignKey{{Alg: "eddsa", KID: "k", KeyFile: ecPath}}, "card sign:"},
		"bad alg":        {[]SignKey{{Alg: "rs256", KID: "k"}}, "alg must be hs256, es256 or eddsa"},
	} {
		_, err := LoadSigners(tc.keys, resolve)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error %q names a path or the secret", name, err)
		}
	}
}
