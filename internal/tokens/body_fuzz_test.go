package tokens

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/jsontext"
)

// tokenRequestSeeds are token request objects, usual and not.
var tokenRequestSeeds = []string{
	`{"type": "card", "data": {"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}}`,
	`{"type": "token", "data": {"a": [1, 2.5e3, {"b": null}], "c": true}, "mask": {"m": "{{ data.c }}"}}`,
	`{"type": "token", "data": "x", "id": "custom-id", "containers": ["/a/b/"], "metadata": {"k": "v"}, "search_indexes": ["{{ data }}"], "fingerprint_expression": "{{ data }}", "deduplicate_token": true}`,
	`{"type": "token", "data": "x", "containers": [], "metadata": {}, "search_indexes": []}`,
	`{"type": "token", "data": null, "mask": null}`,
	`{"type": "token", "data": "x", "id": null}`,
	`{"type": "token", "data": "x", "Containers": ["/a/"]}`,
	`{"type": "token", "data": "x", "containers": ["/a/", 1]}`,
	`{"type": "token", "data": "x", "metadata": {"k": 1}}`,
	`{"type": "token", "data": "x", "deduplicate_token": "yes"}`,
	`{"type": "token", "data": "x", "expires_at": "2030-01-02T15:04:05Z"}`,
	`{"type": "token", "data": "x", "unknown": 1}`,
	`{"type": 7, "data": "x"}`,
}

// FuzzTokenRequestOf: whenever the fast conversion of a request object
// answers, it answers what decoding through encoding/json does, and its
// Data and Mask are copies.
func FuzzTokenRequestOf(f *testing.F) {
	for _, s := range tokenRequestSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		v, err := jsontext.Decode([]byte(body))
		m, isObject := v.(map[string]any)
		if err != nil || !isObject {
			return
		}
		fast, ok := RequestOf(m)
		if !ok {
			return
		}
		slow, e := decodeRequestJSON(m, "")
		if e != nil {
			t.Fatalf("%s: the fast conversion accepted what decoding refuses: %v", body, e)
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Fatalf("%s: fast conversion differs from decoding (-decoded +fast):\n%s", body, diff)
		}
		if data, ok := fast.Data.(map[string]any); ok && len(data) > 0 {
			for k := range data {
				delete(data, k)
			}
			if len(m["data"].(map[string]any)) == 0 {
				t.Fatalf("%s: Data shares the request's map", body)
			}
		}
	})
}

// TestTokenRequestOfAnswers: the usual requests take the fast conversion;
// the rest are left to encoding/json.
func TestTokenRequestOfAnswers(t *testing.T) {
	for i, s := range tokenRequestSeeds {
		v, err := jsontext.Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		_, ok := RequestOf(v.(map[string]any))
		if want := i < 5; ok != want {
			t.Errorf("RequestOf(%s) answered %v, want %v", s, ok, want)
		}
	}
}

// FuzzPlainJSONString: whenever a stored value is taken as a plain string
// without decoding, decoding it gives that string.
func FuzzPlainJSONString(f *testing.F) {
	for _, s := range []string{`"123-45-6789"`, `"caf\u00e9"`, `"é ✓"`, `"a\"b"`, `"\u0000"`, `""`, `"`, `"x" `, "\"\xff\"", `12`, `{"a":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ok := PlainJSONString(b)
		if !ok {
			return
		}
		v, err := jsontext.Decode(b)
		if err != nil || v != s {
			t.Fatalf("%q: taken as %q, decoded as %#v, %v", b, s, v, err)
		}
		if got := DecodeStoredJSON(b); got != s {
			t.Fatalf("%q: DecodeStoredJSON = %#v, want %q", b, got, s)
		}
	})
}
