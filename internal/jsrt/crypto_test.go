package jsrt

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCryptoVectors(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		expr string
		want string
	}{
		// FIPS 180 and RFC 1321 vectors for "abc".
		{`createHash('sha256').update('abc').digest('hex')`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{`createHash('sha256').update('abc').digest('base64')`, "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="},
		{`createHash('sha256').update('abc').digest('base64url')`, "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"},
		{`createHash('sha1').update('abc').digest('hex')`, "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{`createHash('md5').update('abc').digest('hex')`, "900150983cd24fb0d6963f7d28e17f72"},
		{`createHash('SHA-256').update('a').update('b').update('c').digest('hex')`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{`createHash('sha512').update('abc').digest('hex').slice(0, 16)`, "ddaf35a193617aba"},
		{`createHash('sha256').update('').digest('hex')`, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{`createHash('sha256').update('616263', 'hex').digest('hex')`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{`createHash('sha256').update('YWJj', 'base64').digest('hex')`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{`createHash('sha256').update(new Uint8Array([97, 98, 99])).digest('hex')`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{`createHash('sha256').update(new Uint8Array([0, 97, 98, 99]).subarray(1)).digest('hex')`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{`createHash('sha256').update(new Uint8Array([97, 98, 99]).buffer).digest('hex')`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{`createHash('sha256').update('✓').digest('hex')`, "1dabba21cdad44541f6b15796f8d22978fc7ea10c46aeceeeeb66c23b3ac7604"}, // UTF-8 e2 9c 93
		{`Array.from(createHash('sha256').update('abc').digest().slice(0, 4)).join(',')`, "186,120,22,191"},
		// RFC 4231 test case 2.
		{`createHmac('sha256', 'Jefe').update('what do ya want for nothing?').digest('hex')`, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{`createHmac('sha256', 'Jefe').update('what do ya want for nothing?').digest('base64')`, "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM="},
		{`createHmac('sha256', new Uint8Array([74, 101, 102, 101])).update('what do ya want for nothing?').digest('hex')`, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{`createHmac('sha1', 'Jefe').update('what do ya want for nothing?').digest('hex')`, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"},
		{`createHmac('md5', 'Jefe').update('what do ya want for nothing?').digest('hex')`, "750c783e6ab0b503eaa86e310a5db738"},
	}
	for _, tc := range tests {
		code := `const { createHash, createHmac } = require('crypto'); module.exports = () => ` + tc.expr
		if got := runOK(t, r, code, nil, nil); got != tc.want {
			t.Errorf("%s = %v, want %s", tc.expr, got, tc.want)
		}
	}
}

func TestCryptoUUIDAndErrors(t *testing.T) {
	r := New(Options{})
	got := runOK(t, r, `const c = require('node:crypto'); module.exports = () => [c.randomUUID(), c.randomUUID()]`, nil, nil)
	ids, _ := got.([]any)
	uuidV4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if len(ids) != 2 || ids[0] == ids[1] || !uuidV4.MatchString(ids[0].(string)) || !uuidV4.MatchString(ids[1].(string)) {
		t.Errorf("randomUUID() = %v", got)
	}

	for expr, want := range map[string]string{
		`createHash('sha3')`: "Digest method not supported: sha3; allowed: md5, sha1, sha256, sha384, sha512",
		`(() => { const h = createHash('md5'); h.digest('hex'); h.digest('hex') })()`: "Digest already called",
		`(() => { const h = createHash('md5'); h.digest('hex'); h.update('x') })()`:   "Digest already called",
		`createHash('md5').digest('utf16')`:                                           "TypeError: digest: unknown encoding utf16; use hex, base64, base64url or latin1",
		`createHash('md5').update({})`:                                                "TypeError: The \"data\" argument must be a string, an ArrayBuffer or a typed array",
		`createHash('md5').update('zz', 'hex')`:                                       "TypeError: data is not valid hex",
		`createHmac('sha256')`:                                                        "TypeError: The \"key\" argument must be a string, an ArrayBuffer or a typed array",
	} {
		code := `const { createHash, createHmac } = require('crypto'); module.exports = () => ` + expr
		if e := runErr(t, r, code, nil, nil); e.Kind != Thrown || e.Message != want {
			t.Errorf("%s = %#v, want %q", expr, e, want)
		}
	}
}

func TestRequireAllowList(t *testing.T) {
	r := New(Options{})
	got := runOK(t, r, `module.exports = () => [
		require('crypto') === require('crypto'), require('crypto') === require('node:crypto'),
		typeof require('@svc/errors').CustomHttpResponseError, Object.keys(require('@svc/errors')).length]`, nil, nil)
	if diff := cmp.Diff([]any{true, true, "function", 8.0}, got); diff != "" {
		t.Errorf("require mismatch (-want +got):\n%s", diff)
	}
	for _, name := range []string{"fs", "node:fs", "child_process", "http", "net", "process", "./local", "../../etc/passwd", "/etc/passwd", "events", "node:stream", "./buffer", "buffer/", "", "CRYPTO"} {
		code := `module.exports = () => require(` + "`" + name + "`" + `)`
		e := runErr(t, r, code, nil, nil)
		want := "module " + name + " is not available; allowed: @svc/errors, buffer, crypto, url, util"
		if e.Kind != Thrown || e.Class != "Error" || e.Message != want {
			t.Errorf("require(%q) = %#v, want %q", name, e, want)
		}
	}
	if e := runErr(t, r, `module.exports = () => require(42)`, nil, nil); !strings.HasPrefix(e.Message, "TypeError: ") {
		t.Errorf("require(42) = %#v", e)
	}
	// The refusal is catchable, so code can fall back.
	if got := runOK(t, r, `module.exports = () => { try { require('fs') } catch (e) { return e instanceof Error } }`, nil, nil); got != true {
		t.Errorf("caught refusal = %v", got)
	}
}
