package jws

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
)

func newHMAC(key []byte) hash.Hash { return hmac.New(sha256.New, key) }
