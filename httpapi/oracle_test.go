package httpapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// guesses returns 100 Luhn-valid card numbers with right at index 37.
func guesses(right string) []string {
	luhn := func(n string) bool {
		sum, double := 0, false
		for i := len(n) - 1; i >= 0; i-- {
			d := int(n[i] - '0')
			if double {
				if d *= 2; d > 9 {
					d -= 9
				}
			}
			sum, double = sum+d, !double
		}
		return sum%10 == 0
	}
	var out []string
	for i := 0; len(out) < 100; i++ {
		base := fmt.Sprintf("4000%011d", i)
		for d := '0'; d <= '9'; d++ {
			if n := base + string(d); luhn(n) && n != right {
				out = append(out, n)
				break
			}
		}
	}
	out[37] = right
	return out
}

// TestKeysLearnOnlyWhatTheyMayReadOverHTTP is issue 18's attack over HTTP:
// a public key with token:create and token:update recovers nothing of a
// stored card from PATCH /tokens/{id}, POST /tokenize or POST /tokens,
// with or without deduplicate_token.
func TestKeysLearnOnlyWhatTheyMayReadOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	const number, secretRef = "4242424242424242", "alice-private-ref"
	_, admin := s.app(t, map[string]any{"name": "a", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal",
			"permissions": []string{"token:create", "token:read", "token:update"}}}})
	_, attacker := s.app(t, map[string]any{"name": "web", "type": "public", "permissions": []string{"token:create", "token:update"}})
	r := s.do(t, "POST", "/tokens", admin, map[string]any{"type": "card", "metadata": map[string]any{"customer": secretRef},
		"search_indexes": []string{"{{ data.number | last4 }}"},
		"data":           map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2031}})
	wantStatus(t, "POST /tokens by the admin", r, http.StatusCreated)
	var stored tokenvault.Token
	r.json(t, &stored)
	if stored.Fingerprint == "" {
		t.Fatalf("the admin (a reader) got no fingerprint: %s", r.body)
	}

	r = s.do(t, "PATCH", "/tokens/"+stored.ID, attacker, `{"metadata": {"note": "x"}}`, "Content-Type", httpapi.MergePatchType)
	wantStatus(t, "PATCH by the attacker", r, http.StatusOK)
	var pm map[string]any
	r.json(t, &pm)
	want := []string{"containers", "created_at", "created_by", "id", "modified_at", "modified_by", "tenant_id", "type"}
	if got := slices.Sorted(maps.Keys(pm)); !slices.Equal(got, want) {
		t.Errorf("PATCH answer fields = %v, want %v (%s)", got, want, r.body)
	}
	// A new mask over the stored number, which fails only when a guessed
	// digit is wrong, is refused before it runs: the same 403 either way.
	var digitAnswers []string
	for _, digit := range []string{number[:1], "5"} {
		r = s.do(t, "PATCH", "/tokens/"+stored.ID, attacker,
			`{"mask": "{{ data.number | slice: 0, 1 | replace: \"`+digit+`\", \"true\" | to_boolean }}"}`, "Content-Type", httpapi.MergePatchType)
		wantStatus(t, "PATCH a mask over the stored number", r, http.StatusForbidden)
		digitAnswers = append(digitAnswers, string(r.body))
	}
	if digitAnswers[0] != digitAnswers[1] {
		t.Errorf("the right digit and a wrong one are answered differently: %q", digitAnswers)
	}

	first := map[string]map[string]any{}
	check := func(what, guess string, raw json.RawMessage) {
		t.Helper()
		text := string(raw)
		if strings.Contains(text, `"fingerprint"`) || strings.Contains(text, stored.ID) ||
			strings.Contains(text, stored.Fingerprint) || strings.Contains(text, secretRef) {
			t.Fatalf("%s(%s): the answer tells of the stored card: %s", what, guess, text)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		own := map[string]any{"number": "XXXXXXXXXXXX" + guess[12:], "expiration_month": float64(12), "expiration_year": float64(2031)}
		for _, k := range []string{"mask", "data"} {
			if v, ok := m[k]; ok && !cmp.Equal(v, own) {
				t.Fatalf("%s(%s): %s = %v, want the guess's own mask", what, guess, k, v)
			}
			delete(m, k)
		}
		delete(m, "id")
		delete(m, "created_at")
		if f, ok := first[what]; !ok {
			first[what] = m
		} else if diff := cmp.Diff(f, m); diff != "" {
			t.Fatalf("%s(%s): the answer differs from another guess's:\n%s", what, guess, diff)
		}
	}
	var batch []any
	for _, g := range guesses(number) {
		for _, dedupe := range []bool{false, true} {
			body := map[string]any{"type": "card", "deduplicate_token": dedupe,
				"data": map[string]any{"number": g, "expiration_month": 12, "expiration_year": 2031}}
			for _, path := range []string{"/tokenize", "/tokens"} {
				r := s.do(t, "POST", path, attacker, body)
				wantStatus(t, "POST "+path, r, http.StatusCreated)
				check(fmt.Sprintf("POST %s dedupe=%v", path, dedupe), g, r.body)
			}
		}
		batch = append(batch, map[string]any{"type": "card", "deduplicate_token": true,
			"data": map[string]any{"number": g, "expiration_month": 12, "expiration_year": 2031}})
	}
	r = s.do(t, "POST", "/tokenize", attacker, map[string]any{"nested": map[string]any{"cards": batch}})
	wantStatus(t, "POST /tokenize (nested)", r, http.StatusCreated)
	var out struct {
		Nested struct {
			Cards []json.RawMessage `json:"cards"`
		} `json:"nested"`
	}
	r.json(t, &out)
	for i, raw := range out.Nested.Cards {
		check("POST /tokenize nested", guesses(number)[i], raw)
	}
}

// TestTakenCustomIDsTellNothingOverHTTP: the 409 for a taken custom id is
// the same body whatever the existing token's container and type.
func TestTakenCustomIDsTellNothingOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, admin := s.app(t, map[string]any{"name": "a", "type": "private", "permissions": []string{"token:create"}})
	for _, body := range []map[string]any{
		{"id": "order-1", "type": "card", "data": map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}},
		{"id": "order-2", "type": "token", "data": "x", "containers": []string{"/mine/"}},
	} {
		wantStatus(t, "POST /tokens", s.do(t, "POST", "/tokens", admin, body), http.StatusCreated)
	}
	_, caller := s.app(t, map[string]any{"name": "c", "type": "private", "rules": []map[string]any{
		{"priority": 1, "container": "/mine/", "transform": "reveal", "permissions": []string{"token:create", "token:read"}},
		{"priority": 2, "container": "/", "transform": "redact", "permissions": []string{"token:create"}}}})
	var bodies []string
	for _, id := range []string{"order-1", "order-2"} {
		r := s.do(t, "POST", "/tokens", caller, map[string]any{"id": id, "type": "token", "data": "y", "containers": []string{"/mine/"}})
		wantStatus(t, "POST /tokens with taken id "+id, r, http.StatusConflict)
		bodies = append(bodies, string(r.body))
	}
	if bodies[0] != bodies[1] {
		t.Errorf("409 bodies differ:\n%s\n%s", bodies[0], bodies[1])
	}
	if strings.Contains(bodies[0], "/pci/") || strings.Contains(bodies[0], "card") {
		t.Errorf("409 body tells of the existing token: %s", bodies[0])
	}
}
