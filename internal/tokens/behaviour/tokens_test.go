package tokens_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

func TestTransformsShapeData(t *testing.T) {
	e := vaulttest.NewEnv(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	plain := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "plain secret"})
	masked := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "123-45-6789", Mask: "{{ data | reveal_last: 4 }}"})
	cardMask := map[string]any{"number": "XXXXXXXXXXXX4242", "expiration_month": json.Number("12"), "expiration_year": json.Number("2031")}
	cardData := map[string]any{"number": vaulttest.Visa, "expiration_month": json.Number("12"), "expiration_year": json.Number("2031"), "cvc": "123"}
	tests := []struct {
		transform string
		id        string
		want      any
	}{
		{"reveal", card.ID, cardData},
		{"mask", card.ID, cardMask},
		{"redact", card.ID, nil},
		{"reveal", plain.ID, "plain secret"},
		{"mask", plain.ID, nil}, // no mask: data removed
		{"mask", masked.ID, "XXXXXXX6789"},
		{"reveal", masked.ID, "123-45-6789"},
	}
	keys := map[string]tokenvault.Credential{}
	for _, tr := range []string{"reveal", "mask", "redact"} {
		keys[tr] = e.Reader(t, tr, "token:read").Key
	}
	for _, tc := range tests {
		tok, err := e.V.GetToken(ctx, keys[tc.transform], tc.id)
		if err != nil {
			t.Fatalf("GetToken(%s) = %v", tc.transform, err)
		}
		if diff := cmp.Diff(tc.want, tok.Data); diff != "" {
			t.Errorf("GetToken(%s, %s).Data (-want +got):\n%s", tc.transform, tc.id, diff)
		}
	}
	// Plain permissions: token:read implies mask.
	direct := e.App(t, tokenvault.Private, "token:read")
	tok, err := e.V.GetToken(ctx, direct.Key, card.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(any(cardMask), tok.Data); diff != "" {
		t.Errorf("implicit token:read transform (-want +got):\n%s", diff)
	}
}

func TestRulesScopeTokenAccess(t *testing.T) {
	e := vaulttest.NewEnv(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	general := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "g", Containers: []string{"/general/low/"}})
	app, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "scoped", Type: "private",
		Rules: []tokenvault.AccessRule{
			{Priority: 1, Container: "/pci/", Transform: "mask", Permissions: []string{"token:read"}},
			{Priority: 2, Container: "/", Transform: "reveal", Permissions: []string{"token:use"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.GetToken(ctx, app.Key, card.ID); err != nil {
		t.Errorf("GetToken in /pci/ = %v", err)
	}
	_, err = e.V.GetToken(ctx, app.Key, general.ID)
	vaulttest.WantKind(t, "GetToken outside the rule", err, tokenvault.PermissionDenied)
	page, err := e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != card.ID {
		t.Errorf("ListTokens shows %d tokens, want only the card", len(page.Data))
	}
	_, err = e.V.GetToken(ctx, app.Key, "0190a1b2-0000-7000-8000-000000000000")
	vaulttest.WantKind(t, "GetToken(unknown)", err, tokenvault.NotFound)
}

func TestUpdateToken(t *testing.T) {
	e := vaulttest.NewEnv(t)
	tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"name": "Ada", "city": "London"},
		Metadata: map[string]string{"k": "v", "drop": "me"}, SearchIndexes: []string{"{{ data.name }}"}})
	updater := e.Reader(t, "reveal", "token:update", "token:read", "token:search")
	got, err := e.V.UpdateToken(ctx, updater.Key, tok.ID, json.RawMessage(`{"data": {"city": null, "age": 36}, "metadata": {"drop": null, "new": "x"}, "search_indexes": ["{{ data.age }}"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"k": "v", "new": "x"}, got.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	read, err := e.V.GetToken(ctx, updater.Key, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"name": "Ada", "age": json.Number("36")}, read.Data); diff != "" {
		t.Errorf("data after merge patch (-want +got):\n%s", diff)
	}
	if read.ModifiedAt == nil || read.ModifiedBy != updater.ID {
		t.Errorf("modified_* not set: %+v", read)
	}
	// The old search index is gone, the new one works.
	for query, want := range map[string]int{"data:Ada": 0, "data:36": 1, "metadata.new:X": 1, "metadata.drop:me": 0} {
		page, err := e.V.SearchTokens(ctx, updater.Key, tokenvault.SearchTokensRequest{Query: query})
		if err != nil {
			t.Fatalf("SearchTokens(%s) = %v", query, err)
		}
		if len(page.Data) != want {
			t.Errorf("SearchTokens(%s) = %d tokens, want %d", query, len(page.Data), want)
		}
	}
	for name, patch := range map[string]string{
		"type":         `{"type": "card"}`,
		"unknown":      `{"colour": "red"}`,
		"remove data":  `{"data": null}`,
		"not object":   `[1]`,
		"invalid json": `{`,
	} {
		_, err := e.V.UpdateToken(ctx, updater.Key, tok.ID, json.RawMessage(patch))
		vaulttest.WantKind(t, "UpdateToken("+name+")", err, tokenvault.Invalid)
	}
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	_, err = e.V.UpdateToken(ctx, updater.Key, card.ID, json.RawMessage(`{"data": {"number": "1234"}}`))
	vaulttest.WantField(t, err, "data.number")
}

func TestDeleteToken(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x", Metadata: map[string]string{"a": "b"}, SearchIndexes: []string{"{{ data }}"}})
		deleter := e.App(t, tokenvault.Private, "token:delete", "token:read")
		e.SettleChain(t) // the lines so far linked: the linker's work is not the deletion's
		before := vaulttest.Dump(t, e.Store)
		if err := e.V.DeleteToken(ctx, deleter.Key, tok.ID); err != nil {
			t.Fatal(err)
		}
		_, err := e.V.GetToken(ctx, deleter.Key, tok.ID)
		vaulttest.WantKind(t, "GetToken after delete", err, tokenvault.NotFound)
		err = e.V.DeleteToken(ctx, deleter.Key, tok.ID)
		vaulttest.WantKind(t, "DeleteToken twice", err, tokenvault.NotFound)
		// Every index entry went with the record: only new log lines
		// and the count's delta row (its -1) remain.
		after := vaulttest.Dump(t, e.Store)
		for k := range after {
			if _, ok := before[k]; !ok && !isLogKey(k) && !isCountDelta(k) {
				t.Errorf("key %q appeared", k)
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok && !isTokenKey(k, tok.ID) && !isCountDelta(k) {
				t.Errorf("key %q disappeared", k)
			}
		}
	})
}

func TestListTokensFilters(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "a", Metadata: map[string]string{"customer": "Acme"}})
	b := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	c := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	d := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "d", Containers: []string{"/pci/low/"}})
	reader := e.Reader(t, "reveal", "token:read")
	tests := []struct {
		name string
		req  tokenvault.ListTokensRequest
		want []string
	}{
		{"all, oldest first", tokenvault.ListTokensRequest{}, []string{a.ID, b.ID, c.ID, d.ID}},
		{"ids", tokenvault.ListTokensRequest{IDs: []string{d.ID, a.ID}}, []string{a.ID, d.ID}},
		{"type", tokenvault.ListTokensRequest{Type: "card"}, []string{b.ID, c.ID}},
		{"container", tokenvault.ListTokensRequest{Container: "/pci/"}, []string{b.ID, c.ID, d.ID}},
		{"fingerprint", tokenvault.ListTokensRequest{Fingerprint: b.Fingerprint}, []string{b.ID, c.ID}},
		{"metadata case-insensitive", tokenvault.ListTokensRequest{Metadata: map[string]string{"customer": "ACME"}}, []string{a.ID}},
		{"metadata and type", tokenvault.ListTokensRequest{Metadata: map[string]string{"customer": "acme"}, Type: "card"}, nil},
		{"page 2 of size 3", tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Page: 2, Size: 3}}, []string{d.ID}},
	}
	for _, tc := range tests {
		page, err := e.V.ListTokens(ctx, reader.Key, tc.req)
		if err != nil {
			t.Errorf("ListTokens(%s) = %v", tc.name, err)
			continue
		}
		var got []string
		for _, tok := range page.Data {
			got = append(got, tok.ID)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ListTokens(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
	_, err := e.V.ListTokens(ctx, reader.Key, tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Size: 101}})
	vaulttest.WantKind(t, "ListTokens(size 101)", err, tokenvault.Invalid)
}

func TestSearchTokens(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ssn := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"ssn": "123-45-6789"},
		SearchIndexes: []string{"{{ data.ssn }}", "{{ data.ssn | last4 }}"}, Metadata: map[string]string{"country": "US"}})
	other := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"ssn": "987-65-4321"},
		SearchIndexes: []string{"{{ data.ssn }}"}, Metadata: map[string]string{"country": "us", "tier": "gold plus"}})
	// token:read too: metadata terms read metadata (see
	// TestSearchAloneSeesWhatListSees).
	searcher := e.Reader(t, "reveal", "token:search", "token:read")
	tests := []struct {
		query string
		want  []string
	}{
		{"data:123-45-6789", []string{ssn.ID}},
		{"data:6789", []string{ssn.ID}},
		{"data:12345", nil},
		{"metadata.country:us", []string{ssn.ID, other.ID}},
		{`metadata.country:us AND data:987-65-4321`, []string{other.ID}},
		{`metadata.tier:"Gold Plus"`, []string{other.ID}},
		{`type:token and metadata.country:US`, []string{ssn.ID, other.ID}},
		{"", []string{ssn.ID, other.ID}},
	}
	for _, tc := range tests {
		page, err := e.V.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: tc.query})
		if err != nil {
			t.Errorf("SearchTokens(%q) = %v", tc.query, err)
			continue
		}
		var got []string
		for _, tok := range page.Data {
			got = append(got, tok.ID)
			if tok.Data == nil {
				t.Errorf("SearchTokens(%q): data not revealed for a reveal rule", tc.query)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("SearchTokens(%q) (-want +got):\n%s", tc.query, diff)
		}
	}
	for _, bad := range []string{"ssn", "data:1 OR data:2", "colour:red", `data:"open`, "data:1 AND"} {
		_, err := e.V.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: bad})
		vaulttest.WantKind(t, "SearchTokens("+bad+")", err, tokenvault.Invalid)
	}
	reader := e.App(t, tokenvault.Private, "token:read")
	_, err := e.V.SearchTokens(ctx, reader.Key, tokenvault.SearchTokensRequest{})
	vaulttest.WantKind(t, "SearchTokens without token:search", err, tokenvault.PermissionDenied)
}

func TestDetokenize(t *testing.T) {
	e := vaulttest.NewEnv(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	name := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
	reader := e.Reader(t, "reveal", "token:read")
	body := map[string]any{
		"card":   "{{ " + card.ID + " }}",
		"number": "{{ " + card.ID + " | json: '$.number' }}",
		"greet":  "Dear {{" + name.ID + "}},",
		"list":   []any{"{{ " + name.ID + " | upcase }}", 7, nil},
		"plain":  "no expressions",
	}
	got, err := e.V.Detokenize(ctx, reader.Key, body)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"card":   map[string]any{"number": vaulttest.Visa, "expiration_month": 12.0, "expiration_year": 2031.0, "cvc": "123"},
		"number": vaulttest.Visa,
		"greet":  "Dear Ada,",
		"list":   []any{"ADA", 7.0, nil},
		"plain":  "no expressions",
	}
	if diff := cmp.Diff(want, vaulttest.RoundTrip(t, got)); diff != "" {
		t.Errorf("Detokenize (-want +got):\n%s", diff)
	}

	_, err = e.V.Detokenize(ctx, reader.Key, map[string]any{"a": []any{"x", "{{ 0190a1b2-0000-7000-8000-000000000000 }}"}})
	vaulttest.WantField(t, err, "a[1]")
	_, err = e.V.Detokenize(ctx, reader.Key, map[string]any{"a": "{{ " + name.ID + " "})
	vaulttest.WantField(t, err, "a")
	pciOnly, _ := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "p", Type: "private",
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "reveal", Permissions: []string{"token:read"}}}})
	_, err = e.V.Detokenize(ctx, pciOnly.Key, map[string]any{"n": "{{ " + name.ID + " }}"})
	vaulttest.WantKind(t, "Detokenize outside the rule", err, tokenvault.PermissionDenied)

	var many []any
	for range tokenvault.MaxDetokenizedTokens + 1 {
		tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
		many = append(many, "{{ "+tok.ID+" }}")
	}
	_, err = e.V.Detokenize(ctx, reader.Key, many[:tokenvault.MaxDetokenizedTokens])
	if err != nil {
		t.Errorf("Detokenize(%d tokens) = %v", tokenvault.MaxDetokenizedTokens, err)
	}
	_, err = e.V.Detokenize(ctx, reader.Key, many)
	vaulttest.WantField(t, err, "[100]")
}

func TestTokenExpiry(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		at := e.Clock.Now().Add(time.Hour)
		tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x", ExpiresAt: &at, Metadata: map[string]string{"m": "v"}})
		reader := e.App(t, tokenvault.Private, "token:read")
		e.Clock.Advance(time.Hour - time.Nanosecond)
		if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
			t.Fatalf("GetToken just before expiry = %v", err)
		}
		e.Clock.Advance(time.Nanosecond)
		_, err := e.V.GetToken(ctx, reader.Key, tok.ID)
		vaulttest.WantKind(t, "GetToken at expiry", err, tokenvault.NotFound)
		page, _ := e.V.ListTokens(ctx, reader.Key, tokenvault.ListTokensRequest{Metadata: map[string]string{"m": "v"}})
		if len(page.Data) != 0 {
			t.Errorf("an expired token is listed")
		}
		n, err := e.V.Sweep(ctx)
		if err != nil || n != 1 {
			t.Fatalf("Sweep = %d, %v; want 1", n, err)
		}
		for k := range vaulttest.Dump(t, e.Store) {
			if isTokenKey(k, tok.ID) {
				t.Errorf("key %q survived the sweep", k)
			}
		}
	})
}

// isLogKey reports whether a store key belongs to the audit log (its
// chain, and the linker's queue, mark and lease, included).
func isLogKey(k string) bool {
	return strings.Contains(k, "/log/") || strings.Contains(k, "/chain_link/") || strings.Contains(k, "/idx/log-") || strings.Contains(k, "/idx/chain-seq/") ||
		strings.HasSuffix(k, "/chain/head") || strings.HasPrefix(k, "sys/chainq/") || strings.HasPrefix(k, "sys/chain-unsigned/") ||
		strings.HasPrefix(k, "sys/lease/")
}

// isCountDelta reports whether a store key is a delta row of a kept count
// (internal/barrier's Kept counts): a change to a count, which the count
// folder may fold (remove) at any time.
func isCountDelta(k string) bool {
	return strings.Contains(k, "/count/") && strings.Contains(k, "/+/")
}

// isTokenKey reports whether a store key is a token's record, index entry
// or expiry schedule (they all end in its id), not a log line.
func isTokenKey(k, id string) bool {
	if strings.Contains(k, "/idx/tl-") {
		// A list index entry ends in the token's packed position: a
		// UUID id as a zero byte and its 16 bytes.
		if u, err := uuid.Parse(id); err == nil {
			return strings.HasSuffix(k, "\x00"+string(u[:]))
		}
		return strings.HasSuffix(k, id)
	}
	return strings.HasSuffix(k, "/"+id) && !isLogKey(k)
}
