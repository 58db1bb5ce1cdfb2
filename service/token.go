package service

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"sync"
	"time"
)

// Token layout before base64url: version | key id | expiry (Unix seconds) |
// nonce | truncated HMAC-SHA256 of everything before it. The key id is an
// HMAC of the key, so the key is never in a token and cannot be recovered
// from one; the nonce makes every token distinct and unguessable.
const (
	tokenVersion = 1
	kidLen       = 8
	nonceLen     = 12
	macLen       = 16
	payloadLen   = 1 + kidLen + 8 + nonceLen
	tokenRawLen  = payloadLen + macLen
)

var tokenEncoding = base64.RawURLEncoding

// tokenLen is the length of every token this service issues.
var tokenLen = tokenEncoding.EncodedLen(tokenRawLen)

// signer issues and checks tokens with one secret.
type signer struct {
	secret []byte
	macs   *sync.Pool // of *macState, reset before use
}

// macState is a keyed HMAC-SHA256 state with the buffers of one MAC: what
// is written to the hash and its sum live here, not in a heap allocation
// per call (a slice passed to hash.Hash's methods escapes).
type macState struct {
	h       hash.Hash
	payload [payloadLen]byte
	sum     [sha256.Size]byte
}

// macPrefix separates token MACs from the key ids made with the same
// secret.
var macPrefix = []byte("addrclean token\x00")

func newSigner(secret []byte) signer {
	return signer{secret: secret, macs: &sync.Pool{New: func() any { return &macState{h: hmac.New(sha256.New, secret)} }}}
}

// keyID derives the id of an API key under the secret.
func (s signer) keyID(key string) [kidLen]byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("addrclean key id\x00"))
	m.Write([]byte(key))
	var id [kidLen]byte
	copy(id[:], m.Sum(nil))
	return id
}

// mac appends the truncated MAC of payload to dst. Keyed states are pooled:
// every verify request checks one, and setting up HMAC costs more than
// running it over a few dozen bytes.
func (s signer) mac(dst []byte, payload *[payloadLen]byte) []byte {
	m := s.macs.Get().(*macState)
	m.h.Reset()
	m.h.Write(macPrefix)
	m.payload = *payload
	m.h.Write(m.payload[:])
	out := append(dst, m.h.Sum(m.sum[:0])[:macLen]...)
	s.macs.Put(m)
	return out
}

// issue returns a token for the key id valid until exp.
func (s signer) issue(kid [kidLen]byte, exp time.Time) (string, error) {
	var raw [tokenRawLen]byte
	raw[0] = tokenVersion
	copy(raw[1:], kid[:])
	binary.BigEndian.PutUint64(raw[1+kidLen:], uint64(exp.Unix()))
	if _, err := rand.Read(raw[1+kidLen+8 : payloadLen]); err != nil {
		return "", fmt.Errorf("service: token nonce: %w", err)
	}
	var sum [macLen]byte
	copy(raw[payloadLen:], s.mac(sum[:0], (*[payloadLen]byte)(raw[:payloadLen])))
	return tokenEncoding.EncodeToString(raw[:]), nil
}

// check verifies a token's signature and expiry and returns its key id. A
// token that was not signed with the secret is errInvalidToken; a genuine
// one past its expiry is errExpiredToken.
func (s signer) check(tok string, now time.Time) ([kidLen]byte, *apiError) {
	var kid [kidLen]byte
	if len(tok) != tokenLen {
		return kid, errInvalidToken
	}
	var raw [tokenRawLen]byte
	var enc [64]byte // tokenLen: the token's bytes without a heap copy
	n, err := tokenEncoding.Decode(raw[:], enc[:copy(enc[:], tok)])
	if err != nil || n != tokenRawLen || raw[0] != tokenVersion {
		return kid, errInvalidToken
	}
	var want [macLen]byte
	if !hmac.Equal(raw[payloadLen:], s.mac(want[:0], (*[payloadLen]byte)(raw[:payloadLen]))) {
		return kid, errInvalidToken
	}
	copy(kid[:], raw[1:])
	exp := int64(binary.BigEndian.Uint64(raw[1+kidLen:]))
	if now.Unix() >= exp {
		return kid, errExpiredToken
	}
	return kid, nil
}
