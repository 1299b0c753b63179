package jsrt

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"reflect"
	"strings"

	"github.com/dop251/goja"
	"github.com/google/uuid"
)

// hashes are the digest algorithms of require('crypto'), by Node's names.
var hashes = map[string]func() hash.Hash{
	"md5":    md5.New,
	"sha1":   sha1.New,
	"sha256": sha256.New,
	"sha384": sha512.New384,
	"sha512": sha512.New,
}

const allowedHashes = "md5, sha1, sha256, sha384, sha512"

// cryptoModule is require('crypto'): the pure subset of Node's module that
// reactors use, implemented in Go.
//
//	randomUUID()                          a random (v4) UUID
//	createHash(alg)                       md5, sha1, sha256, sha384, sha512
//	createHmac(alg, key)                  key: string (UTF-8) or bytes
//	  .update(data[, inputEncoding])      data: string or bytes; chainable
//	  .digest([encoding])                 'hex', 'base64', 'base64url',
//	                                      'latin1'/'binary'; none: a Uint8Array
//
// "bytes" means an ArrayBuffer, a typed array or a DataView. Input
// encodings for strings are 'utf8' (the default), 'hex', 'base64',
// 'base64url' and 'latin1'/'binary'.
func (s *session) cryptoModule() goja.Value {
	m := s.vm.NewObject()
	m.Set("randomUUID", s.fn("randomUUID", 0, func(goja.FunctionCall) goja.Value {
		return s.vm.ToValue(uuid.NewString())
	}))
	m.Set("createHash", s.fn("createHash", 1, func(call goja.FunctionCall) goja.Value {
		return s.hashObject(s.hashAlgorithm(call.Argument(0))())
	}))
	m.Set("createHmac", s.fn("createHmac", 2, func(call goja.FunctionCall) goja.Value {
		newHash := s.hashAlgorithm(call.Argument(0))
		key := s.bytesArg(call.Argument(1), goja.Undefined(), "key")
		return s.hashObject(hmac.New(newHash, key))
	}))
	return m
}

func (s *session) hashAlgorithm(v goja.Value) func() hash.Hash {
	name := strings.ToLower(strings.ReplaceAll(v.String(), "-", ""))
	newHash, ok := hashes[name]
	if !ok {
		panic(s.newError("Digest method not supported: " + clipTo(v.String(), 50) + "; allowed: " + allowedHashes))
	}
	return newHash
}

// hashObject is a Hash or Hmac: update(...) and digest(...), once.
func (s *session) hashObject(h hash.Hash) *goja.Object {
	o := s.vm.NewObject()
	done := false
	o.Set("update", s.fn("update", 1, func(call goja.FunctionCall) goja.Value {
		if done {
			panic(s.newError("Digest already called"))
		}
		h.Write(s.bytesArg(call.Argument(0), call.Argument(1), "data"))
		return o
	}))
	o.Set("digest", s.fn("digest", 0, func(call goja.FunctionCall) goja.Value {
		if done {
			panic(s.newError("Digest already called"))
		}
		done = true
		sum := h.Sum(nil)
		enc := call.Argument(0)
		if goja.IsUndefined(enc) {
			return s.uint8Array(sum)
		}
		switch strings.ToLower(enc.String()) {
		case "hex":
			return s.vm.ToValue(hex.EncodeToString(sum))
		case "base64":
			return s.vm.ToValue(base64.StdEncoding.EncodeToString(sum))
		case "base64url":
			return s.vm.ToValue(base64.RawURLEncoding.EncodeToString(sum))
		case "latin1", "binary":
			return s.vm.ToValue(latin1(sum))
		}
		panic(s.hostTypeError("digest: unknown encoding " + clipTo(enc.String(), 50) + "; use hex, base64, base64url or latin1"))
	}))
	return o
}

// bytesArg converts data (a string in encoding, or bytes) to bytes.
func (s *session) bytesArg(data, encoding goja.Value, what string) []byte {
	if goja.IsString(data) {
		str := data.String()
		enc := "utf8"
		if !goja.IsUndefined(encoding) && !goja.IsNull(encoding) {
			enc = strings.ToLower(encoding.String())
		}
		switch enc {
		case "utf8", "utf-8":
			return []byte(str)
		case "hex":
			b, err := hex.DecodeString(str)
			if err != nil {
				panic(s.hostTypeError(what + " is not valid hex"))
			}
			return b
		case "base64", "base64url":
			str = strings.TrimRight(strings.NewReplacer("-", "+", "_", "/").Replace(str), "=")
			b, err := base64.RawStdEncoding.DecodeString(str)
			if err != nil {
				panic(s.hostTypeError(what + " is not valid base64"))
			}
			return b
		case "latin1", "binary":
			b, ok := fromLatin1(str)
			if !ok {
				panic(s.hostTypeError(what + " has characters outside latin1"))
			}
			return b
		}
		panic(s.hostTypeError("unknown encoding " + clipTo(enc, 50) + "; use utf8, hex, base64, base64url or latin1"))
	}
	if b, ok := s.bufferBytes(data); ok {
		return b
	}
	panic(s.hostTypeError("The \"" + what + "\" argument must be a string, an ArrayBuffer or a typed array"))
}

// bufferBytes is the memory of an ArrayBuffer, or the part of one that a
// typed array (a Buffer too) or a DataView views: writing to it writes to
// the JavaScript object. ok is false for anything else.
func (s *session) bufferBytes(v goja.Value) (b []byte, ok bool) {
	obj, isObj := v.(*goja.Object)
	if !isObj {
		return nil, false
	}
	if obj.ExportType() == arrayBufferType {
		return obj.Export().(goja.ArrayBuffer).Bytes(), true
	}
	if buf, isObj := obj.Get("buffer").(*goja.Object); isObj && buf.ExportType() == arrayBufferType { // typed arrays, DataView
		ab := buf.Export().(goja.ArrayBuffer)
		off, n := obj.Get("byteOffset").ToInteger(), obj.Get("byteLength").ToInteger()
		if all := ab.Bytes(); off >= 0 && n >= 0 && off+n <= int64(len(all)) {
			return all[off : off+n], true
		}
	}
	return nil, false
}

var arrayBufferType = reflect.TypeOf(goja.ArrayBuffer{})

// uint8Array is a new Uint8Array holding a copy of b.
func (s *session) uint8Array(b []byte) goja.Value {
	ab := s.vm.NewArrayBuffer(append([]byte(nil), b...))
	ctor, ok := s.vm.Get("Uint8Array").(*goja.Object)
	if !ok {
		return s.vm.ToValue(ab)
	}
	arr, err := s.vm.New(ctor, s.vm.ToValue(ab))
	if err != nil {
		return s.vm.ToValue(ab)
	}
	return arr
}

// latin1 is b as a string of code points 0-255.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// fromLatin1 is the bytes of a string of code points 0-255.
func fromLatin1(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			return nil, false
		}
		out = append(out, byte(r))
	}
	return out, true
}

// btoa and atob are as in browsers and Node.
func (s *session) btoa() goja.Value {
	return s.fn("btoa", 1, func(call goja.FunctionCall) goja.Value {
		b, ok := fromLatin1(call.Argument(0).String())
		if !ok {
			panic(s.newError("Invalid character"))
		}
		return s.vm.ToValue(base64.StdEncoding.EncodeToString(b))
	})
}

func (s *session) atob() goja.Value {
	return s.fn("atob", 1, func(call goja.FunctionCall) goja.Value {
		str := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r' {
				return -1
			}
			return r
		}, call.Argument(0).String())
		b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(str, "="))
		if err != nil {
			panic(s.newError("The string to be decoded is not correctly encoded."))
		}
		return s.vm.ToValue(latin1(b))
	})
}
