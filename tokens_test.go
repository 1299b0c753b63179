package tokenvault_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault"
)

// cardRequest is a valid card token request.
func cardRequest(number string) tokenvault.TokenRequest {
	return tokenvault.TokenRequest{Type: "card", Data: map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}}
}

func (e *env) token(t testing.TB, req tokenvault.TokenRequest) *tokenvault.Token {
	t.Helper()
	// token:read revealing too: fingerprints are shown only to keys that
	// read the data in clear.
	creator := e.reader(t, "reveal", "token:create", "token:read")
	tok, err := e.v.CreateToken(ctx, creator.Key, req)
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	return tok
}

func TestTransformsShapeData(t *testing.T) {
	e := newEnv(t)
	card := e.token(t, cardRequest(visa))
	plain := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "plain secret"})
	masked := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "123-45-6789", Mask: "{{ data | reveal_last: 4 }}"})
	cardMask := map[string]any{"number": "XXXXXXXXXXXX4242", "expiration_month": json.Number("12"), "expiration_year": json.Number("2031")}
	cardData := map[string]any{"number": visa, "expiration_month": json.Number("12"), "expiration_year": json.Number("2031"), "cvc": "123"}
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
		keys[tr] = e.reader(t, tr, "token:read").Key
	}
	for _, tc := range tests {
		tok, err := e.v.GetToken(ctx, keys[tc.transform], tc.id)
		if err != nil {
			t.Fatalf("GetToken(%s) = %v", tc.transform, err)
		}
		if diff := cmp.Diff(tc.want, tok.Data); diff != "" {
			t.Errorf("GetToken(%s, %s).Data (-want +got):\n%s", tc.transform, tc.id, diff)
		}
	}
	// Plain permissions: token:read implies mask.
	direct := e.app(t, tokenvault.Private, "token:read")
	tok, err := e.v.GetToken(ctx, direct.Key, card.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(any(cardMask), tok.Data); diff != "" {
		t.Errorf("implicit token:read transform (-want +got):\n%s", diff)
	}
}

func TestRulesScopeTokenAccess(t *testing.T) {
	e := newEnv(t)
	card := e.token(t, cardRequest(visa))
	general := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "g", Containers: []string{"/general/low/"}})
	app, err := e.v.CreateApplication(ctx, e.mgmt, tokenvault.CreateApplicationRequest{Name: "scoped", Type: "private",
		Rules: []tokenvault.AccessRule{
			{Priority: 1, Container: "/pci/", Transform: "mask", Permissions: []string{"token:read"}},
			{Priority: 2, Container: "/", Transform: "reveal", Permissions: []string{"token:use"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.v.GetToken(ctx, app.Key, card.ID); err != nil {
		t.Errorf("GetToken in /pci/ = %v", err)
	}
	_, err = e.v.GetToken(ctx, app.Key, general.ID)
	wantKind(t, "GetToken outside the rule", err, tokenvault.PermissionDenied)
	page, err := e.v.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != card.ID {
		t.Errorf("ListTokens shows %d tokens, want only the card", len(page.Data))
	}
	_, err = e.v.GetToken(ctx, app.Key, "0190a1b2-0000-7000-8000-000000000000")
	wantKind(t, "GetToken(unknown)", err, tokenvault.NotFound)
}

func TestUpdateToken(t *testing.T) {
	e := newEnv(t)
	tok := e.token(t, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"name": "Ada", "city": "London"},
		Metadata: map[string]string{"k": "v", "drop": "me"}, SearchIndexes: []string{"{{ data.name }}"}})
	updater := e.reader(t, "reveal", "token:update", "token:read", "token:search")
	got, err := e.v.UpdateToken(ctx, updater.Key, tok.ID, json.RawMessage(`{"data": {"city": null, "age": 36}, "metadata": {"drop": null, "new": "x"}, "search_indexes": ["{{ data.age }}"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"k": "v", "new": "x"}, got.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	read, err := e.v.GetToken(ctx, updater.Key, tok.ID)
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
		page, err := e.v.SearchTokens(ctx, updater.Key, tokenvault.SearchTokensRequest{Query: query})
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
		_, err := e.v.UpdateToken(ctx, updater.Key, tok.ID, json.RawMessage(patch))
		wantKind(t, "UpdateToken("+name+")", err, tokenvault.Invalid)
	}
	card := e.token(t, cardRequest(visa))
	_, err = e.v.UpdateToken(ctx, updater.Key, card.ID, json.RawMessage(`{"data": {"number": "1234"}}`))
	wantField(t, err, "data.number")
}

func TestDeleteToken(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		tok := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "x", Metadata: map[string]string{"a": "b"}, SearchIndexes: []string{"{{ data }}"}})
		deleter := e.app(t, tokenvault.Private, "token:delete", "token:read")
		settleChain(t, e.v) // the lines so far linked: the linker's work is not the deletion's
		before := dump(t, e.store)
		if err := e.v.DeleteToken(ctx, deleter.Key, tok.ID); err != nil {
			t.Fatal(err)
		}
		_, err := e.v.GetToken(ctx, deleter.Key, tok.ID)
		wantKind(t, "GetToken after delete", err, tokenvault.NotFound)
		err = e.v.DeleteToken(ctx, deleter.Key, tok.ID)
		wantKind(t, "DeleteToken twice", err, tokenvault.NotFound)
		// Every index entry went with the record: only new log lines
		// and the count's delta row (its -1) remain.
		after := dump(t, e.store)
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
	e := newEnv(t)
	a := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "a", Metadata: map[string]string{"customer": "Acme"}})
	b := e.token(t, cardRequest(visa))
	c := e.token(t, cardRequest(visa))
	d := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "d", Containers: []string{"/pci/low/"}})
	reader := e.reader(t, "reveal", "token:read")
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
		page, err := e.v.ListTokens(ctx, reader.Key, tc.req)
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
	_, err := e.v.ListTokens(ctx, reader.Key, tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Size: 101}})
	wantKind(t, "ListTokens(size 101)", err, tokenvault.Invalid)
}

func TestSearchTokens(t *testing.T) {
	e := newEnv(t)
	ssn := e.token(t, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"ssn": "123-45-6789"},
		SearchIndexes: []string{"{{ data.ssn }}", "{{ data.ssn | last4 }}"}, Metadata: map[string]string{"country": "US"}})
	other := e.token(t, tokenvault.TokenRequest{Type: "token", Data: map[string]any{"ssn": "987-65-4321"},
		SearchIndexes: []string{"{{ data.ssn }}"}, Metadata: map[string]string{"country": "us", "tier": "gold plus"}})
	// token:read too: metadata terms read metadata (see
	// TestSearchAloneSeesWhatListSees).
	searcher := e.reader(t, "reveal", "token:search", "token:read")
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
		page, err := e.v.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: tc.query})
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
		_, err := e.v.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: bad})
		wantKind(t, "SearchTokens("+bad+")", err, tokenvault.Invalid)
	}
	reader := e.app(t, tokenvault.Private, "token:read")
	_, err := e.v.SearchTokens(ctx, reader.Key, tokenvault.SearchTokensRequest{})
	wantKind(t, "SearchTokens without token:search", err, tokenvault.PermissionDenied)
}

func TestDetokenize(t *testing.T) {
	e := newEnv(t)
	card := e.token(t, cardRequest(visa))
	name := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
	reader := e.reader(t, "reveal", "token:read")
	body := map[string]any{
		"card":   "{{ " + card.ID + " }}",
		"number": "{{ " + card.ID + " | json: '$.number' }}",
		"greet":  "Dear {{" + name.ID + "}},",
		"list":   []any{"{{ " + name.ID + " | upcase }}", 7, nil},
		"plain":  "no expressions",
	}
	got, err := e.v.Detokenize(ctx, reader.Key, body)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"card":   map[string]any{"number": visa, "expiration_month": 12.0, "expiration_year": 2031.0, "cvc": "123"},
		"number": visa,
		"greet":  "Dear Ada,",
		"list":   []any{"ADA", 7.0, nil},
		"plain":  "no expressions",
	}
	if diff := cmp.Diff(want, roundTrip(t, got)); diff != "" {
		t.Errorf("Detokenize (-want +got):\n%s", diff)
	}

	_, err = e.v.Detokenize(ctx, reader.Key, map[string]any{"a": []any{"x", "{{ 0190a1b2-0000-7000-8000-000000000000 }}"}})
	wantField(t, err, "a[1]")
	_, err = e.v.Detokenize(ctx, reader.Key, map[string]any{"a": "{{ " + name.ID + " "})
	wantField(t, err, "a")
	pciOnly, _ := e.v.CreateApplication(ctx, e.mgmt, tokenvault.CreateApplicationRequest{Name: "p", Type: "private",
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "reveal", Permissions: []string{"token:read"}}}})
	_, err = e.v.Detokenize(ctx, pciOnly.Key, map[string]any{"n": "{{ " + name.ID + " }}"})
	wantKind(t, "Detokenize outside the rule", err, tokenvault.PermissionDenied)

	var many []any
	for range tokenvault.MaxDetokenizedTokens + 1 {
		tok := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
		many = append(many, "{{ "+tok.ID+" }}")
	}
	_, err = e.v.Detokenize(ctx, reader.Key, many[:tokenvault.MaxDetokenizedTokens])
	if err != nil {
		t.Errorf("Detokenize(%d tokens) = %v", tokenvault.MaxDetokenizedTokens, err)
	}
	_, err = e.v.Detokenize(ctx, reader.Key, many)
	wantField(t, err, "[100]")
}

func TestTokenExpiry(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		at := e.clock.Now().Add(time.Hour)
		tok := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "x", ExpiresAt: &at, Metadata: map[string]string{"m": "v"}})
		reader := e.app(t, tokenvault.Private, "token:read")
		e.clock.Advance(time.Hour - time.Nanosecond)
		if _, err := e.v.GetToken(ctx, reader.Key, tok.ID); err != nil {
			t.Fatalf("GetToken just before expiry = %v", err)
		}
		e.clock.Advance(time.Nanosecond)
		_, err := e.v.GetToken(ctx, reader.Key, tok.ID)
		wantKind(t, "GetToken at expiry", err, tokenvault.NotFound)
		page, _ := e.v.ListTokens(ctx, reader.Key, tokenvault.ListTokensRequest{Metadata: map[string]string{"m": "v"}})
		if len(page.Data) != 0 {
			t.Errorf("an expired token is listed")
		}
		n, err := e.v.Sweep(ctx)
		if err != nil || n != 1 {
			t.Fatalf("Sweep = %d, %v; want 1", n, err)
		}
		for k := range dump(t, e.store) {
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
