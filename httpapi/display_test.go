package httpapi_test

import (
	"testing"

	"github.com/tokenvault/tokenvault/httpapi"
)

// TestDisplayRuleOverHTTP: ids and masks whose composed filters show
// hidden data are a 400 at their field, on POST /tokens, POST /tokenize
// and PATCH.
func TestDisplayRuleOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, key := s.app(t, map[string]any{"name": "b", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read", "token:update"}}}})
	card := map[string]any{"number": "5105105105105100", "expiration_month": 12, "expiration_year": 2031}
	for name, tc := range map[string]struct {
		body  map[string]any
		field string
	}{
		"replace before fpe":  {map[string]any{"type": "card", "data": card, "id": `{{ data.number | replace: '5', '-' | fpe: 'digits' }}`}, "id"},
		"ssn in an alias id":  {map[string]any{"type": "token", "data": "123-45-6789", "id": `{{ data | alias_preserve_length }}_{{ data }}`}, "id"},
		"card mask in base64": {map[string]any{"type": "card", "data": card, "mask": map[string]any{"number": "{{ data.number | to_base64 }}"}}, "mask"},
		"fpe codebook":        {map[string]any{"type": "card", "data": card, "id": `{{ data.number | slice: 8, 1 | pad_left: 6, '0' | fpe: 'digits' }}`}, "id"},
		"card mask folding":   {map[string]any{"type": "card", "data": card, "mask": map[string]any{"number": "{{ data.number | replace: '1', '0' | replace: '3', '2' }}"}}, "mask"},
	} {
		r := s.do(t, "POST", "/tokens", key, tc.body)
		wantStatus(t, "POST /tokens, "+name, r, 400)
		if p := r.problem(t); p.Errors[tc.field] == nil {
			t.Errorf("%s: errors = %v, want one at %s", name, p.Errors, tc.field)
		}
		r = s.do(t, "POST", "/tokenize", key, map[string]any{"t": tc.body})
		wantStatus(t, "POST /tokenize, "+name, r, 400)
		if p := r.problem(t); p.Errors["t."+tc.field] == nil {
			t.Errorf("%s: errors = %v, want one at t.%s", name, p.Errors, tc.field)
		}
	}
	r := s.do(t, "POST", "/tokens", key, map[string]any{"type": "card", "data": card})
	wantStatus(t, "POST /tokens, a card", r, 201)
	var tok struct{ ID string }
	r.json(t, &tok)
	r = s.do(t, "PATCH", "/tokens/"+tok.ID, key, `{"mask": {"number": "{{ data.number | upcase }}"}}`,
		"Content-Type", "application/merge-patch+json")
	wantStatus(t, "PATCH /tokens/{id} with the number upcased as mask", r, 400)
	if p := r.problem(t); p.Errors["mask"] == nil {
		t.Errorf("errors = %v, want one at mask", p.Errors)
	}

	// A token whose alias id shows an ssn's last four keeps a mask
	// showing them.
	r = s.do(t, "POST", "/tokens", key, map[string]any{"type": "token", "data": "123-45-6789",
		"id": "{{ data | alias_preserve_format: 0, 4 }}", "mask": "{{ data | reveal_last: 4 }}"})
	wantStatus(t, "POST /tokens, an ssn alias", r, 201)
	r.json(t, &tok)
	r = s.do(t, "PATCH", "/tokens/"+tok.ID, key, `{"mask": null}`, "Content-Type", "application/merge-patch+json")
	wantStatus(t, "PATCH /tokens/{alias} removing the mask", r, 400)
	if p := r.problem(t); p.Errors["mask"] == nil {
		t.Errorf("errors = %v, want one at mask", p.Errors)
	}
}
