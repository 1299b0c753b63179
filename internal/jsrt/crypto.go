package jsrt

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/dop251/goja"
	"github.com/google/uuid"
)

// hashes are the algorithms the crypto module offers.
var hashes = map[string]func() hash.Hash{"sha256": sha256.New, "sha1": sha1.New, "md5": md5.New}

// cryptoModule is require('crypto'): the small, pure subset of Node's
// module that reactors use.
func (s *sandbox) cryptoModule() goja.Value {
	m := s.vm.NewObject()
	m.Set("randomUUID", func() string { return uuid.NewString() })
	m.Set("createHash", func(alg string) *goja.Object {
		newHash, ok := hashes[alg]
		if !ok {
			s.throwGo(fmt.Errorf("hash %q is not available; allowed: sha256, sha1, md5", alg))
		}
		return s.hashObject(newHash())
	})
	m.Set("createHmac", func(alg string, key goja.Value) *goja.Object {
		newHash, ok := hashes[alg]
		if !ok {
			s.throwGo(fmt.Errorf("hash %q is not available; allowed: sha256, sha1, md5", alg))
		}
		return s.hashObject(hmac.New(newHash, []byte(key.String())))
	})
	return m
}

func (s *sandbox) hashObject(h hash.Hash) *goja.Object {
	o := s.vm.NewObject()
	o.Set("update", func(data goja.Value) *goja.Object {
		h.Write([]byte(data.String()))
		return o
	})
	o.Set("digest", func(enc goja.Value) string {
		sum := h.Sum(nil)
		switch e := enc.String(); {
		case goja.IsUndefined(enc) || e == "hex":
			return hex.EncodeToString(sum)
		case e == "base64":
			return base64.StdEncoding.EncodeToString(sum)
		default:
			s.throwGo(fmt.Errorf("digest encoding %q is not available; allowed: hex, base64", e))
			return ""
		}
	})
	return o
}
