package push

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/keyfile"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
)

// KeyRingEnv is the environment variable that, when set, holds a whole key
// ring (the JSON of the key ring file) for read-only deployments; the file
// under the data directory is then neither read nor written.
const KeyRingEnv = "A2A_PUSH_KEYRING"

// sealPrefix starts every sealed value: "v1:<key id>:<base64(nonce|ciphertext)>".
const sealPrefix = "v1:"

// ErrDecrypt is returned for a sealed value that cannot be opened: unknown
// key id, tampered ciphertext, or a value sealed for another record.
var ErrDecrypt = errors.New("cannot decrypt push secret")

// KeyRing encrypts notification tokens and callback credentials at rest
// with AES-256-GCM (PUSH-3). It holds several keys, each with an id; new
// values are sealed with the active key, and any key of the ring opens old
// ones, so rotation keeps old records readable. Safe for concurrent use.
type KeyRing struct {
	mu     sync.RWMutex
	path   string // "" when read-only (from the environment)
	active string
	keys   map[string]cipher.AEAD
	raw    keyRingFile
}

type keyRingFile struct {
	Active string       `json:"active"`
	Keys   []keyRingKey `json:"keys"`
}

type keyRingKey struct {
	ID      string `json:"id"`
	Key     string `json:"key"` // base64, 32 bytes
	Created string `json:"created,omitempty"`
}

// maxKeyRingBytes bounds the key ring file read.
const maxKeyRingBytes = 1 << 20

// LoadKeyRing returns the key ring of the data directory dir (PUSH-3):
// from KeyRingEnv when set (read-only), else dir/push.keys (created 0600).
func LoadKeyRing(dir string) (*KeyRing, error) {
	if v := os.Getenv(KeyRingEnv); v != "" {
		kr, err := ParseKeyRing([]byte(v))
		if err != nil {
			return nil, fmt.Errorf("push: %s: %w", KeyRingEnv, err)
		}
		return kr, nil
	}
	kr, err := LoadOrCreateKeyRing(filepath.Join(dir, "push.keys"))
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	return kr, nil
}

// LoadOrCreateKeyRing opens the key ring file at path, creating it (mode
// 0600, with one fresh key) when it does not exist.
func LoadOrCreateKeyRing(path string) (*KeyRing, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		kr := &KeyRing{path: path, keys: map[string]cipher.AEAD{}}
		if _, err := kr.addKey(); err != nil {
			return nil, err
		}
		if err := kr.save(true); err != nil {
			if errors.Is(err, fs.ErrExist) { // created concurrently: read it
				return LoadOrCreateKeyRing(path)
			}
			return nil, err
		}
		return kr, nil
	}
	if err != nil {
		return nil, errors.New("reading the push key ring failed")
	}
	defer f.Close()
	if err := keyfile.Check(f, filepath.Base(path)); err != nil {
		return nil, fmt.Errorf("the push key ring: %w", err)
	}
	b, err := limitio.ReadAll(f, maxKeyRingBytes)
	if limitio.IsTooLarge(err) {
		return nil, errors.New("the push key ring file is too large")
	}
	if err != nil {
		return nil, errors.New("reading the push key ring failed")
	}
	kr, err := ParseKeyRing(b)
	if err != nil {
		return nil, err
	}
	kr.path = path
	return kr, nil
}

// ParseKeyRing reads a key ring from its JSON text (the file's content, or
// the value of KeyRingEnv). The result is read-only: Rotate fails.
func ParseKeyRing(b []byte) (*KeyRing, error) {
	var raw keyRingFile
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, errors.New("the push key ring is not valid JSON")
	}
	kr := &KeyRing{keys: map[string]cipher.AEAD{}, raw: raw, active: raw.Active}
	for _, k := range raw.Keys {
		if k.ID == "" || strings.Contains(k.ID, ":") {
			return nil, errors.New("the push key ring has a key with an empty or invalid id")
		}
		key, err := base64.StdEncoding.DecodeString(k.Key)
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("push key %q is not 32 base64-encoded bytes", k.ID)
		}
		aead, err := newAEAD(key)
		if err != nil {
			return nil, err
		}
		if _, dup := kr.keys[k.ID]; dup {
			return nil, fmt.Errorf("push key id %q appears twice", k.ID)
		}
		kr.keys[k.ID] = aead
	}
	if _, ok := kr.keys[kr.active]; !ok {
		return nil, errors.New("the active push key is not in the key ring")
	}
	return kr, nil
}

// NewKeyRing returns an in-memory key ring with one random key (tests,
// or a deployment that keeps no secrets across restarts).
func NewKeyRing() (*KeyRing, error) {
	kr := &KeyRing{keys: map[string]cipher.AEAD{}}
	if _, err := kr.addKey(); err != nil {
		return nil, err
	}
	return kr, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	blk, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("push key: %w", err)
	}
	return cipher.NewGCM(blk)
}

// addKey generates a key, adds it and makes it active. Callers hold mu or
// own kr exclusively.
func (kr *KeyRing) addKey() (string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("generating a push key: %w", err)
	}
	idb := make([]byte, 6)
	if _, err := rand.Read(idb); err != nil {
		return "", fmt.Errorf("generating a push key id: %w", err)
	}
	id := "k" + base64.RawURLEncoding.EncodeToString(idb)
	aead, err := newAEAD(key)
	if err != nil {
		return "", err
	}
	kr.keys[id] = aead
	kr.active = id
	kr.raw.Active = id
	kr.raw.Keys = append(kr.raw.Keys, keyRingKey{ID: id, Key: base64.StdEncoding.EncodeToString(key), Created: time.Now().UTC().Format(time.RFC3339)})
	return id, nil
}

// save writes the ring to its file with mode 0600 (exclusive: fail when it
// exists), or atomically replaces it.
func (kr *KeyRing) save(exclusive bool) error {
	b, err := json.MarshalIndent(kr.raw, "", "  ")
	if err != nil {
		return err
	}
	if exclusive {
		if err := os.MkdirAll(filepath.Dir(kr.path), 0o700); err != nil {
			return errors.New("creating the push key ring directory failed")
		}
		f, err := os.OpenFile(kr.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			if errors.Is(err, fs.ErrExist) {
				return err
			}
			return errors.New("creating the push key ring failed")
		}
		if _, err := f.Write(b); err != nil {
			_ = f.Close()
			return errors.New("writing the push key ring failed")
		}
		if err := f.Sync(); err != nil {
			_ = f.Close()
			return errors.New("writing the push key ring failed")
		}
		return f.Close()
	}
	tmp, err := os.CreateTemp(filepath.Dir(kr.path), ".push.keys-*")
	if err != nil {
		return errors.New("writing the push key ring failed")
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return errors.New("writing the push key ring failed")
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return errors.New("writing the push key ring failed")
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return errors.New("writing the push key ring failed")
	}
	if err := tmp.Close(); err != nil {
		return errors.New("writing the push key ring failed")
	}
	if err := os.Rename(tmp.Name(), kr.path); err != nil {
		return errors.New("writing the push key ring failed")
	}
	return nil
}

// Rotate adds a new key, makes it active and saves the file. Values sealed
// with older keys stay readable. It returns the new key id.
func (kr *KeyRing) Rotate() (string, error) {
	kr.mu.Lock()
	defer kr.mu.Unlock()
	if kr.path == "" {
		return "", errors.New("the push key ring is read-only")
	}
	prevActive, prevRaw := kr.active, kr.raw
	prevRaw.Keys = append([]keyRingKey(nil), kr.raw.Keys...)
	id, err := kr.addKey()
	if err != nil {
		return "", err
	}
	if err := kr.save(false); err != nil {
		delete(kr.keys, id)
		kr.active, kr.raw = prevActive, prevRaw
		return "", err
	}
	return id, nil
}

// ActiveKeyID returns the id of the key new values are sealed with.
func (kr *KeyRing) ActiveKeyID() string {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	return kr.active
}

// Load replaces the keys of kr with those of src (and where it saves
// them). The a2a app hands an empty ring (new(KeyRing)) to a push engine
// when a configuration is provisioned and loads the data directory's ring
// into it only once the gateway owns the directory (OPS-6); until then
// Seal fails and Open opens nothing.
func (kr *KeyRing) Load(src *KeyRing) {
	src.mu.RLock()
	path, active, keys, raw := src.path, src.active, src.keys, src.raw
	src.mu.RUnlock()
	kr.mu.Lock()
	kr.path, kr.active, kr.keys, kr.raw = path, active, keys, raw
	kr.mu.Unlock()
}

// Seal encrypts plain, binding it to aad (for example "taskID/configID") so
// that a sealed value copied to another record does not open. An empty
// plain seals to "".
func (kr *KeyRing) Seal(plain, aad string) (string, error) {
	if plain == "" {
		return "", nil
	}
	kr.mu.RLock()
	id, aead := kr.active, kr.keys[kr.active]
	kr.mu.RUnlock()
	if aead == nil {
		return "", errors.New("sealing push secret: the key ring is not loaded")
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("sealing push secret: %w", err)
	}
	ct := aead.Seal(nonce, nonce, []byte(plain), []byte(id+"\x00"+aad))
	return sealPrefix + id + ":" + base64.RawStdEncoding.EncodeToString(ct), nil
}

// Open decrypts a value sealed by Seal with the same aad. "" opens to "".
func (kr *KeyRing) Open(sealed, aad string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	rest, ok := strings.CutPrefix(sealed, sealPrefix)
	if !ok {
		return "", ErrDecrypt
	}
	id, enc, ok := strings.Cut(rest, ":")
	if !ok {
		return "", ErrDecrypt
	}
	kr.mu.RLock()
	aead := kr.keys[id]
	kr.mu.RUnlock()
	if aead == nil {
		return "", ErrDecrypt
	}
	ct, err := base64.RawStdEncoding.DecodeString(enc)
	if err != nil || len(ct) < aead.NonceSize()+aead.Overhead() {
		return "", ErrDecrypt
	}
	pt, err := aead.Open(nil, ct[:aead.NonceSize()], ct[aead.NonceSize():], []byte(id+"\x00"+aad))
	if err != nil {
		return "", ErrDecrypt
	}
	return string(pt), nil
}
