package expr

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
)

// hmacs are the algorithms hmac accepts, checked at parse time so a
// fingerprint expression cannot name one that fails later.
var hmacs = map[string]func() hash.Hash{
	"sha256": sha256.New,
	"sha512": sha512.New,
}

func hmacAlgorithm(a []arg) error {
	if hmacs[a[0].s] == nil {
		return errors.New("algorithm must be 'sha256' or 'sha512'")
	}
	return nil
}

// hmacHex is the lowercase hex HMAC of the text under the key.
func hmacHex(s string, a []arg) (any, error) {
	m := hmac.New(hmacs[a[0].s], []byte(a[1].s))
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil)), nil
}

func toBase64(s string, _ []arg) (any, error) {
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

func toBase16(s string, _ []arg) (any, error) { return hex.EncodeToString([]byte(s)), nil }
