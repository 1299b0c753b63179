package httpapi_test

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/httpapi"
)

// TestFPEOverHTTP: encode and decode round trip over HTTP; bad input is a
// 400 problem naming the field without quoting the value; a key without
// the permission is 403; decode writes its audit line.
func TestFPEOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	var app struct{ ID, Key string }
	r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "fpe", "type": "private", "permissions": []string{"fpe:encode", "fpe:decode"},
	})
	wantStatus(t, "create app", r, 201)
	r.json(t, &app)
	var pub struct{ Key string }
	r = s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "web", "type": "public", "permissions": []string{"fpe:encode"}})
	wantStatus(t, "create public app", r, 201)
	r.json(t, &pub)

	req := map[string]any{"transformation": "card_bin_last4", "tweak": "t1", "values": []string{"4242 4242 4242 4242"}}
	r = s.do(t, "POST", "/fpe/encode", app.Key, req)
	wantStatus(t, "encode", r, 200)
	var enc struct{ Values []string }
	r.json(t, &enc)
	if len(enc.Values) != 1 || enc.Values[0] == "4242 4242 4242 4242" || !strings.HasPrefix(enc.Values[0], "4242 42") || !strings.HasSuffix(enc.Values[0], " 4242") {
		t.Fatalf("encode = %s", r.body)
	}
	r = s.do(t, "POST", "/fpe/encode", pub.Key, req)
	wantStatus(t, "encode with a public key", r, 200)
	var again struct{ Values []string }
	r.json(t, &again)
	if again.Values[0] != enc.Values[0] {
		t.Errorf("another key of the tenant encodes %q, want %q", again.Values[0], enc.Values[0])
	}

	req["values"] = enc.Values
	r = s.do(t, "POST", "/fpe/decode", app.Key, req)
	wantStatus(t, "decode", r, 200)
	var dec struct{ Values []string }
	r.json(t, &dec)
	if len(dec.Values) != 1 || dec.Values[0] != "4242 4242 4242 4242" {
		t.Fatalf("decode = %s", r.body)
	}
	r = s.do(t, "POST", "/fpe/decode", pub.Key, req)
	wantStatus(t, "decode with a public key", r, 403)
	r.problem(t)

	r = s.do(t, "GET", "/logs?entity_type=fpe", s.mgmt, nil)
	wantStatus(t, "logs", r, 200)
	if !strings.Contains(string(r.body), `"entity_id":"card_bin_last4"`) || strings.Contains(string(r.body), "4242") {
		t.Errorf("decode's audit line: %s", r.body)
	}

	const secret = "31415x926535"
	for name, c := range map[string]struct {
		body  any
		field string
	}{
		"wrong alphabet": {map[string]any{"transformation": "digits", "values": []string{secret}}, "values[0]"},
		"too short":      {map[string]any{"transformation": "digits", "values": []string{"12345"}}, "values[0]"},
		"too long":       {map[string]any{"alphabet": "ab", "values": []string{strings.Repeat("ab", 600)}}, "values[0]"},
		"bad tweak":      {map[string]any{"transformation": "card", "tweak": strings.Repeat("t", 250), "values": []string{"4242424242424242"}}, "values[0]"},
		"unknown field":  {map[string]any{"transformation": "digits", "values": []string{"123456"}, "radix": 10}, "radix"},
	} {
		for _, path := range []string{"/fpe/encode", "/fpe/decode"} {
			r := s.do(t, "POST", path, app.Key, c.body)
			wantStatus(t, name+" "+path, r, 400)
			p := r.problem(t)
			if _, ok := p.Errors[c.field]; !ok || strings.Contains(string(r.body), secret) {
				t.Errorf("%s %s: %s (want field %s, no value)", name, path, r.body, c.field)
			}
		}
	}
	r = s.do(t, "POST", "/fpe/encode", "", req)
	wantStatus(t, "no key", r, 401)
}

// TestFPETokenIDOverHTTP: POST /tokenize with an id derived with fpe
// answers the id, the token is read back by it, the same card again is
// 409, and an id expression that prints data in clear is a 400 at its
// path.
func TestFPETokenIDOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	var app struct{ Key string }
	r := s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "p", "type": "private", "rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read"}}},
	})
	wantStatus(t, "create app", r, 201)
	r.json(t, &app)
	card := map[string]any{"number": "5555555555554444", "expiration_month": 12, "expiration_year": 2031}
	body := map[string]any{"c": map[string]any{"type": "card", "data": card, "id": `{{ data.number | fpe: "card_bin_last4" }}`}}
	r = s.do(t, "POST", "/tokenize", app.Key, body)
	wantStatus(t, "tokenize", r, 201)
	var out struct{ C struct{ ID string } }
	r.json(t, &out)
	if id := out.C.ID; len(id) != 16 || !strings.HasPrefix(id, "555555") || !strings.HasSuffix(id, "4444") || id == "5555555555554444" {
		t.Fatalf("id %q", id)
	}
	r = s.do(t, "GET", "/tokens/"+out.C.ID, app.Key, nil)
	wantStatus(t, "GET by the fpe id", r, 200)
	r = s.do(t, "POST", "/tokenize", app.Key, body)
	wantStatus(t, "the same card again", r, 409)
	r.problem(t)
	body["c"].(map[string]any)["id"] = `{{ data.number }}`
	r = s.do(t, "POST", "/tokenize", app.Key, body)
	wantStatus(t, "an id in clear", r, 400)
	if p := r.problem(t); p.Errors["c.id"] == nil || strings.Contains(string(r.body), "55555555") {
		t.Errorf("an id in clear: %s", r.body)
	}
	// The display rule: a card mask showing the first ten digits is
	// refused (at the mask, whatever the id).
	body["c"] = map[string]any{"type": "card", "data": map[string]any{"number": "4000056655665556",
		"expiration_month": 12, "expiration_year": 2031}, "id": `{{ data.number | fpe: "card_bin_last4" }}`,
		"mask": map[string]any{"number": "{{ data.number | slice: 0, 10 }}"}}
	r = s.do(t, "POST", "/tokenize", app.Key, body)
	wantStatus(t, "a mask showing ten digits beside an fpe id", r, 400)
	if p := r.problem(t); p.Errors["c.mask"] == nil {
		t.Errorf("display rule: %s", r.body)
	}
}
