package tokens_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// abstract replaces each token id string by "<id>" and each token object by
// its type, data and mask, so that whole structures compare with cmp.
func abstract(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["tenant_id"]; ok {
			out := map[string]any{"type": x["type"], "id": "<id>"}
			for _, k := range []string{"data", "mask"} {
				if d, ok := x[k]; ok {
					out[k] = d
				}
			}
			return out
		}
		out := map[string]any{}
		for k, val := range x {
			out[k] = abstract(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = abstract(val)
		}
		return out
	case string:
		if len(x) == 36 && strings.Count(x, "-") == 4 {
			return "<id>"
		}
	}
	return v
}

func TestTokenizeKeepsShape(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		creator := e.App(t, tokenvault.Private, "token:create")
		card := map[string]any{"type": "card", "data": map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}}
		cardMask := map[string]any{"number": "XXXXXXXXXXXX4242", "expiration_month": 12.0, "expiration_year": 2031.0}
		tests := []struct {
			name string
			body string
			want any
		}{
			{"single request", `{"type": "token", "data": "secret"}`, map[string]any{"type": "token", "id": "<id>"}},
			{"single card", vaulttest.MustJSON(card), map[string]any{"type": "card", "id": "<id>", "data": cardMask, "mask": cardMask}},
			{"object of plain values", `{"name": "Ada", "ssn": "123-45-6789", "age": 36, "vip": true, "none": null}`,
				map[string]any{"name": "<id>", "ssn": "<id>", "age": "<id>", "vip": "<id>", "none": nil}},
			{"nested object with arrays", `{"person": {"names": ["Ada", "Lovelace"], "address": {"city": "London"}}, "cards": [` + vaulttest.MustJSON(card) + `]}`,
				map[string]any{"person": map[string]any{"names": []any{"<id>", "<id>"}, "address": map[string]any{"city": "<id>"}},
					"cards": []any{map[string]any{"type": "card", "id": "<id>", "data": cardMask, "mask": cardMask}}}},
			{"array", `["a", {"type": "token", "data": {"x": 1}}, [1, 2], {"k": "v"}]`,
				[]any{"<id>", map[string]any{"type": "token", "id": "<id>"}, []any{"<id>", "<id>"}, map[string]any{"k": "<id>"}}},
			{"object with type but no data is plain", `{"type": "card", "brand": "visa"}`, map[string]any{"type": "<id>", "brand": "<id>"}},
			{"unknown type is plain", `{"type": "spaceship", "data": "x"}`, map[string]any{"type": "<id>", "data": "<id>"}},
			{"empty object", `{}`, map[string]any{}},
		}
		for _, tc := range tests {
			got, err := e.V.Tokenize(ctx, creator.Key, json.RawMessage(tc.body))
			if err != nil {
				t.Errorf("Tokenize(%s) = %v", tc.name, err)
				continue
			}
			if diff := cmp.Diff(tc.want, abstract(vaulttest.RoundTrip(t, got))); diff != "" {
				t.Errorf("Tokenize(%s) shape (-want +got):\n%s", tc.name, diff)
			}
		}
	})
}

func TestTokenizedValuesReadBack(t *testing.T) {
	e := vaulttest.NewEnv(t)
	creator := e.App(t, tokenvault.Private, "token:create")
	revealer := e.Reader(t, "reveal", "token:read")
	out, err := e.V.Tokenize(ctx, creator.Key, map[string]any{
		"name": "Ada", "age": json.Number("36.50"), "tags": []any{"x", true},
		"card": tokenvault.TokenRequest{Type: "card", Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 1, "expiration_year": 2031}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := out.(map[string]any)
	for _, tc := range []struct {
		id   string
		want any
	}{
		{m["name"].(string), "Ada"},
		{m["age"].(string), json.Number("36.50")},
		{m["tags"].([]any)[1].(string), true},
		{m["card"].(*tokenvault.Token).ID, map[string]any{"number": vaulttest.Visa, "expiration_month": json.Number("1"), "expiration_year": json.Number("2031")}},
	} {
		tok, err := e.V.GetToken(ctx, revealer.Key, tc.id)
		if err != nil {
			t.Fatalf("GetToken(%s) = %v", tc.id, err)
		}
		if diff := cmp.Diff(tc.want, tok.Data); diff != "" {
			t.Errorf("GetToken(%s).Data (-want +got):\n%s", tc.id, diff)
		}
	}
}

// TestTokenizeIsAllOrNothing checks that one bad value anywhere fails the
// whole request with its path, and creates nothing.
func TestTokenizeIsAllOrNothing(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		creator := e.App(t, tokenvault.Private, "token:create")
		good := map[string]any{"type": "card", "data": map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}}
		bad := map[string]any{"type": "card", "data": map[string]any{"number": "4242424242424241", "expiration_month": 12, "expiration_year": 2031}}
		e.SettleChain(t)
		before := vaulttest.Dump(t, e.Store)
		_, err := e.V.Tokenize(ctx, creator.Key, map[string]any{"name": "Ada", "cards": []any{good, good, bad}})
		vaulttest.WantField(t, err, "cards[2].data.number")
		if diff := cmp.Diff(before, vaulttest.Dump(t, e.Store)); diff != "" {
			t.Errorf("a failed Tokenize changed the store:\n%s", diff)
		}
	})
}

func TestTokenValidation(t *testing.T) {
	e := vaulttest.NewEnv(t)
	creator := e.App(t, tokenvault.Private, "token:create")
	card := func(fields map[string]any) map[string]any {
		data := map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}
		for k, v := range fields {
			if v == nil {
				delete(data, k)
			} else {
				data[k] = v
			}
		}
		return map[string]any{"type": "card", "data": data}
	}
	bank := func(routing, account string) map[string]any {
		return map[string]any{"type": "bank", "data": map[string]any{"routing_number": routing, "account_number": account}}
	}
	past := e.Clock.Now().Add(-time.Second)
	tests := []struct {
		name  string
		body  any
		field string
	}{
		{"luhn", card(map[string]any{"number": "4242424242424241"}), "data.number"},
		{"short number", card(map[string]any{"number": "424242424242"}), "data.number"},
		{"long number", card(map[string]any{"number": "42424242424242424242"}), "data.number"},
		{"number with spaces", card(map[string]any{"number": "4242 4242 4242 4242"}), "data.number"},
		{"number as number", card(map[string]any{"number": 4242424242424242}), "data.number"},
		{"missing number", card(map[string]any{"number": nil}), "data.number"},
		{"month 0", card(map[string]any{"expiration_month": 0}), "data.expiration_month"},
		{"month 13", card(map[string]any{"expiration_month": 13}), "data.expiration_month"},
		{"month fraction", card(map[string]any{"expiration_month": 1.5}), "data.expiration_month"},
		{"month string", card(map[string]any{"expiration_month": "12"}), "data.expiration_month"},
		{"two-digit year", card(map[string]any{"expiration_year": 31}), "data.expiration_year"},
		{"past year", card(map[string]any{"expiration_year": 2029}), "data.expiration_year"},
		{"cvc letters", card(map[string]any{"cvc": "12a"}), "data.cvc"},
		{"cvc 5 digits", card(map[string]any{"cvc": "12345"}), "data.cvc"},
		{"card unknown field", card(map[string]any{"name": "Ada"}), "data.name"},
		{"card data not object", map[string]any{"type": "card", "data": "4242"}, "data"},
		{"aba checksum", bank("021000022", "1234567"), "data.routing_number"},
		{"aba length", bank("02100002", "1234567"), "data.routing_number"},
		{"account letters", bank("021000021", "12ab567"), "data.account_number"},
		{"token data null", map[string]any{"type": "token", "data": nil}, "data"},
		{"unknown request field", map[string]any{"type": "token", "data": "x", "colour": "red"}, "colour"},
		{"metadata not strings", map[string]any{"type": "token", "data": "x", "metadata": map[string]any{"a": 1}}, "metadata"},
		{"bad container", map[string]any{"type": "token", "data": "x", "containers": []any{"pci"}}, "containers[0]"},
		{"expires in past", map[string]any{"type": "token", "data": "x", "expires_at": past}, "expires_at"},
		{"custom id with slash", map[string]any{"type": "token", "data": "x", "id": "a/b/c"}, "id"},
		{"custom id too short", map[string]any{"type": "token", "data": "x", "id": "ab"}, "id"},
		{"custom id with a leading space", map[string]any{"type": "token", "data": "x", "id": " abc"}, "id"},
		{"fingerprint expression syntax", map[string]any{"type": "token", "data": "x", "fingerprint_expression": "{{ data"}, "fingerprint_expression"},
		{"mask expression filter", map[string]any{"type": "token", "data": "x", "mask": "{{ data | nope }}"}, "mask"},
		{"search index empty", map[string]any{"type": "token", "data": map[string]any{"a": "x"}, "search_indexes": []any{"{{ data.b }}"}}, "search_indexes[0]"},
		{"search index object", map[string]any{"type": "token", "data": map[string]any{"a": "x"}, "search_indexes": []any{"{{ data }}"}}, "search_indexes[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.V.Tokenize(ctx, creator.Key, tc.body)
			vaulttest.WantField(t, err, tc.field)
		})
	}
	for _, ok := range []any{card(map[string]any{"cvc": nil}), card(map[string]any{"number": "4000056655665556"}),
		card(map[string]any{"number": "378282246310005", "cvc": "1234"}), card(map[string]any{"expiration_year": 2030, "expiration_month": 1}),
		bank("021000021", "1234567890"), map[string]any{"type": "token", "data": "x", "id": "customer-42.email"}} {
		if _, err := e.V.Tokenize(ctx, creator.Key, ok); err != nil {
			t.Errorf("Tokenize(%v) = %v, want success", ok, err)
		}
	}
}

func TestCardResponsesNeverCarryTheNumber(t *testing.T) {
	e := vaulttest.NewEnv(t)
	// Even a key allowed to reveal sees only the mask in a create response.
	creator := e.Reader(t, "reveal", "token:create")
	tok, err := e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "card",
		Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 3, "expiration_year": 2032, "cvc": "987"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tok)
	if strings.Contains(string(b), vaulttest.Visa) {
		t.Errorf("create response %s contains the number", b)
	}
	// The cvc is three digits: look for it where data could be, not in
	// ids and fingerprints, whose hex holds "987" now and then.
	shown, _ := json.Marshal([]any{tok.Data, tok.Mask, tok.Metadata, tok.SearchIndexes})
	if strings.Contains(string(shown), "987") {
		t.Errorf("create response data %s contains the cvc", shown)
	}
	want := map[string]any{"number": "XXXXXXXXXXXX4242", "expiration_month": json.Number("3"), "expiration_year": json.Number("2032")}
	if diff := cmp.Diff(want, tok.Mask); diff != "" {
		t.Errorf("mask (-want +got):\n%s", diff)
	}
	// A key that may not read the card gets no fingerprint (it would be
	// an oracle for card numbers).
	if tok.Containers[0] != "/pci/high/" || tok.FingerprintExpression != "{{ data.number }}" || tok.Fingerprint != "" {
		t.Errorf("card defaults: %+v", tok)
	}
}

func TestFingerprintsAndDeduplication(t *testing.T) {
	e := vaulttest.NewEnv(t)
	creator := e.Revealer(t, "token:create", "token:read")
	cardReq := func(number string, month int, dedupe bool) tokenvault.TokenRequest {
		return tokenvault.TokenRequest{Type: "card", DeduplicateToken: dedupe,
			Data: map[string]any{"number": number, "expiration_month": month, "expiration_year": 2031}}
	}
	a, _ := e.V.CreateToken(ctx, creator.Key, cardReq(vaulttest.Visa, 1, false))
	b, _ := e.V.CreateToken(ctx, creator.Key, cardReq(vaulttest.Visa, 2, false))
	c, _ := e.V.CreateToken(ctx, creator.Key, cardReq(vaulttest.Mastercard, 1, false))
	if a.Fingerprint != b.Fingerprint || a.ID == b.ID {
		t.Errorf("same number: fingerprints %s, %s; ids %s, %s", a.Fingerprint, b.Fingerprint, a.ID, b.ID)
	}
	if a.Fingerprint == c.Fingerprint {
		t.Errorf("different numbers share a fingerprint")
	}
	if strings.Contains(a.Fingerprint, "4242") {
		t.Errorf("fingerprint %s shows the number", a.Fingerprint)
	}
	d, err := e.V.CreateToken(ctx, creator.Key, cardReq(vaulttest.Visa, 5, true))
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != a.ID {
		t.Errorf("deduplicated create returned %s, want the existing %s", d.ID, a.ID)
	}
	// A plain token with the same text is another type: not deduplicated.
	p, _ := e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: vaulttest.Visa, DeduplicateToken: true})
	if p.ID == a.ID {
		t.Errorf("a plain token deduplicated onto a card")
	}
	// Another tenant gets another fingerprint for the same number.
	other := e.Tenant(t, "Other")
	oc, err := e.V.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{Name: "c", Type: "private",
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read"}}}})
	if err != nil {
		t.Fatal(err)
	}
	o, _ := e.V.CreateToken(ctx, oc.Key, cardReq(vaulttest.Visa, 1, false))
	if o.Fingerprint == "" || o.Fingerprint == a.Fingerprint {
		t.Errorf("fingerprints are the same across tenants")
	}
}

// TestConcurrentDeduplication tokenizes one value from 32 goroutines at once:
// exactly one token must exist afterwards.
func TestConcurrentDeduplication(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		creator := e.Revealer(t, "token:create", "token:read")
		ids := make([]string, 32)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				tok, err := e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: "same value", DeduplicateToken: true})
				if err != nil {
					t.Errorf("CreateToken = %v", err)
					return
				}
				ids[i] = tok.ID
			})
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("concurrent deduplicated creates returned several ids: %v", ids)
			}
		}
		page, err := e.V.ListTokens(ctx, creator.Key, tokenvault.ListTokensRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if page.Pagination.TotalItems != 1 {
			t.Errorf("%d tokens exist, want 1", page.Pagination.TotalItems)
		}
	})
}

func TestTokenizeNeedsCreateOnEachContainer(t *testing.T) {
	e := vaulttest.NewEnv(t)
	pciOnly, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "pci", Type: "public",
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "mask", Permissions: []string{"token:create"}}}})
	if err != nil {
		t.Fatal(err)
	}
	card := map[string]any{"type": "card", "data": map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}}
	if _, err := e.V.Tokenize(ctx, pciOnly.Key, card); err != nil {
		t.Errorf("card into /pci/high/ = %v", err)
	}
	e.SettleChain(t)
	before := vaulttest.Dump(t, e.Store)
	_, err = e.V.Tokenize(ctx, pciOnly.Key, []any{card, "plain goes to /general/high/"})
	vaulttest.WantKind(t, "Tokenize outside the rule's container", err, tokenvault.PermissionDenied)
	// It wrote nothing but its denied line (with its index and chain
	// queue entries), in a transaction of its own: no token, no count.
	after := vaulttest.Dump(t, e.Store)
	for k, v := range before {
		if w, ok := after[k]; !ok || !bytes.Equal(v, w) {
			t.Errorf("a refused Tokenize changed or removed %q", k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok && !strings.Contains(k, "/log/") && !strings.Contains(k, "/idx/log-e/application/") && !strings.HasPrefix(k, "sys/chainq/") {
			t.Errorf("a refused Tokenize wrote %q, not an entry of its denied line", k)
		}
	}
	if denied, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeDenied}); err != nil || len(denied.Data) != 1 {
		t.Errorf("denied lines after a refused Tokenize = %v, %v; want 1", denied, err)
	}
	_, err = e.V.Tokenize(ctx, pciOnly.Key, map[string]any{"type": "token", "data": "x", "containers": []any{"/pci/low/", "/general/"}})
	vaulttest.WantKind(t, "Tokenize into two containers, one allowed", err, tokenvault.PermissionDenied)
	_, err = e.V.Tokenize(ctx, e.Mgmt, card)
	vaulttest.WantKind(t, "Tokenize with a management key", err, tokenvault.PermissionDenied)
}

func TestEveryTokenCreatedIsLogged(t *testing.T) {
	e := vaulttest.NewEnv(t)
	creator := e.App(t, tokenvault.Private, "token:create")
	_, err := e.V.Tokenize(ctx, creator.Key, map[string]any{
		"a": "secret-a", "b": []any{"secret-b"},
		"c": map[string]any{"type": "card", "data": map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}},
		"d": map[string]any{"type": "bank", "data": map[string]any{"routing_number": "021000021", "account_number": "99887766"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, typ := range []string{"token", "card", "bank"} {
		logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: typ})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range logs.Data {
			count[typ]++
			if l.Operation != "create" || l.ActorID != creator.ID {
				t.Errorf("log %+v", l)
			}
			for _, secret := range []string{"secret", vaulttest.Visa, "99887766"} {
				if strings.Contains(l.Message, secret) {
					t.Errorf("log message %q holds data", l.Message)
				}
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"token": 2, "card": 1, "bank": 1}, count); diff != "" {
		t.Errorf("log lines per type (-want +got):\n%s", diff)
	}
}

func TestCustomTokenIDs(t *testing.T) {
	e := vaulttest.NewEnv(t)
	creator := e.App(t, tokenvault.Private, "token:create", "token:read")
	tok, err := e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{ID: "customer:42", Type: "token", Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if tok.ID != "customer:42" {
		t.Errorf("id = %q", tok.ID)
	}
	_, err = e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{ID: "customer:42", Type: "token", Data: "y"})
	vaulttest.WantKind(t, "duplicate id", err, tokenvault.Conflict)
	if _, err := e.V.GetToken(ctx, creator.Key, "customer:42"); err != nil {
		t.Errorf("GetToken(custom id) = %v", err)
	}
}

var _ = fmt.Sprint

// TestMetadataNullRefused: a null metadata value is refused, naming it,
// not stored as "" (encoding/json's reading of null into a string).
func TestMetadataNullRefused(t *testing.T) {
	e := vaulttest.NewEnv(t)
	key := e.Reader(t, "reveal", tokenvault.PermTokenCreate, tokenvault.PermTokenRead).Key
	_, err := e.V.Tokenize(ctx, key, json.RawMessage(`{"a": {"type": "token", "data": "x", "metadata": {"k": null}}}`))
	vaulttest.WantField(t, err, "a.metadata.k")
	_, err = e.V.Tokenize(ctx, key, map[string]any{"type": "token", "data": "x", "metadata": map[string]any{"k": nil}})
	vaulttest.WantField(t, err, "metadata.k")
}
