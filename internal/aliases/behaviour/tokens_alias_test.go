package aliases_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// luhnDigits is luhnValid over the digits of s, delimiters skipped.
func luhnDigits(s string) bool {
	return vaulttest.LuhnValid(strings.Map(func(r rune) rune {
		if r < '0' || r > '9' {
			return -1
		}
		return r
	}, s))
}

// constantRand gives the same byte forever: every alias drawn from it is
// the same, which forces collisions.
type constantRand byte

func (c constantRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// newAliasEnv opens a Vault whose Options.Rand is r.
func newAliasEnv(t *testing.T, r io.Reader) *vaulttest.Env {
	t.Helper()
	return vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Rand = r })
}

// aliasCardRequest is a card request with an id.
func aliasCardRequest(number, id string) tokenvault.TokenRequest {
	return tokenvault.TokenRequest{Type: "card", ID: id,
		Data: map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2031}}
}

func TestAliasIDs(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read", "token:update", "token:delete", "token:search")

	tok, err := e.V.CreateToken(ctx, app.Key, aliasCardRequest(vaulttest.Visa, "{{ data.number | alias_card: true, true }}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.ID) != 16 || tok.ID[:8] != vaulttest.Visa[:8] || tok.ID[12:] != vaulttest.Visa[12:] || tok.ID == vaulttest.Visa {
		t.Errorf("alias %q does not keep the BIN (8 digits) and last four of a 16-digit number", tok.ID)
	}
	if luhnDigits(tok.ID) {
		t.Errorf("alias %q passes the Luhn check; card aliases must not by default", tok.ID)
	}
	got, err := e.V.GetToken(ctx, app.Key, tok.ID)
	if err != nil || got.ID != tok.ID {
		t.Fatalf("GetToken(alias) = %v, %v", got, err)
	}

	// Luhn-valid on request; a plain token's data; spaces and dashes kept.
	out, err := e.V.Tokenize(ctx, app.Key, map[string]any{
		"valid":  map[string]any{"type": "card", "id": "{{ data.number | alias_card: false, true, true }}", "data": map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}},
		"spaced": map[string]any{"type": "token", "id": "{{ data | alias_card: true, true }}", "data": "4242 4242-4242 4242"},
		"ssn":    map[string]any{"type": "token", "id": "{{ data | alias_preserve_format: 0, 4 }}", "data": "123-45-6789", "mask": "{{ data | reveal_last: 4 }}"},
		"code":   map[string]any{"type": "token", "id": "tok_{{ data.code | upcase | alias_preserve_length: 2 }}", "data": map[string]any{"code": "ab-cd-ef"}, "mask": "{{ data.code | slice: 0, 2 }}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for k, v := range out.(map[string]any) {
		ids[k] = v.(*tokenvault.Token).ID
	}
	if id := ids["valid"]; len(id) != 16 || !luhnDigits(id) || id[12:] != vaulttest.Visa[12:] {
		t.Errorf("luhn_valid alias %q: want 16 digits passing Luhn ending in the last four", id)
	}
	if id := ids["spaced"]; len(id) != 19 || id[4] != ' ' || id[9] != '-' || id[:9] != "4242 4242" || id[15:] != "4242" {
		t.Errorf("alias %q does not keep the delimiters, BIN and last four of 4242 4242-4242 4242", id)
	}
	if id := ids["ssn"]; len(id) != 11 || id[3] != '-' || id[6] != '-' || id[7:] != "6789" {
		t.Errorf("alias %q does not keep the format and last four of an SSN", id)
	}
	if id := ids["code"]; len(id) != 12 || !strings.HasPrefix(id, "tok_AB") || strings.Contains(id[6:], "-") {
		t.Errorf("alias %q: want tok_AB and 6 random letters or digits", id)
	}

	// The spaced alias works wherever an id does.
	spaced := ids["spaced"]
	if _, err := e.V.UpdateToken(ctx, app.Key, spaced, json.RawMessage(`{"metadata":{"k":"v"}}`)); err != nil {
		t.Fatalf("UpdateToken(alias) = %v", err)
	}
	det, err := e.V.Detokenize(ctx, app.Key, map[string]any{"n": "{{ " + spaced + " }}", "last": "{{ " + spaced + " | last4 }}"})
	if err != nil {
		t.Fatal(err)
	}
	if m := det.(map[string]any); m["n"] != "4242 4242-4242 4242" || m["last"] != "4242" {
		t.Errorf("Detokenize by alias = %v", m)
	}
	page, err := e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{IDs: []string{spaced, tok.ID}})
	if err != nil || len(page.Data) != 2 {
		t.Fatalf("ListTokens(ids: aliases) = %v, %v; want both", page, err)
	}
	found, err := e.V.SearchTokens(ctx, app.Key, tokenvault.SearchTokensRequest{Query: `id:"` + spaced + `"`})
	if err != nil || len(found.Data) != 1 || found.Data[0].ID != spaced {
		t.Fatalf("SearchTokens(id: alias) = %v, %v", found, err)
	}
	logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "token", EntityID: spaced})
	if err != nil || len(logs.Data) < 3 {
		t.Fatalf("ListLogs(entity: alias) = %v, %v; want its create, update and read", logs, err)
	}
	if err := e.V.DeleteToken(ctx, app.Key, spaced); err != nil {
		t.Fatalf("DeleteToken(alias) = %v", err)
	}
	_, err = e.V.GetToken(ctx, app.Key, spaced)
	vaulttest.WantKind(t, "GetToken(deleted alias)", err, tokenvault.NotFound)
}

func TestAliasIDsRefused(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read")
	tests := []struct {
		name string
		body map[string]any
		path string
		msg  string
	}{
		{"no alias filter", map[string]any{"type": "token", "data": "secret-value", "id": "{{ data }}"}, "id", "must use an alias filter"},
		{"not a card", map[string]any{"type": "token", "data": "42x42", "id": "{{ data | alias_card }}"}, "id", "needs a card number"},
		{"too short to reveal", map[string]any{"type": "token", "data": "4242424242", "id": "{{ data | alias_card: true, true }}"}, "id", "more digits than it reveals"},
		{"alias too short for an id", map[string]any{"type": "token", "data": "ab", "id": "{{ data | alias_preserve_length }}"}, "id", "must be 3 to 400 characters"},
		{"first and last overlap", map[string]any{"type": "token", "data": "abcd", "id": "{{ data | alias_preserve_format: 2, 2 }}"}, "id", "none would be random"},
		{"syntax", map[string]any{"type": "token", "data": "abcd", "id": "{{ data | alias_card: 1 }}"}, "id", "true or false"},
		{"alias filter in a mask", map[string]any{"type": "token", "data": "abcd", "mask": "{{ data | alias_preserve_length }}"}, "mask", "token ids only"},
		{"alias filter in a search index", map[string]any{"type": "token", "data": "abcd", "search_indexes": []any{"{{ data | alias_preserve_length }}"}}, "search_indexes[0]", "token ids only"},
		{"in a nested request", map[string]any{"type": "token", "data": "4242", "id": "{{ data | alias_card: true }}"}, "id", "more digits"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.V.Tokenize(ctx, app.Key, tc.body)
			var te *tokenvault.Error
			if !errors.As(err, &te) || te.Kind != tokenvault.Invalid || !strings.Contains(strings.Join(te.Fields[tc.path], " "), tc.msg) {
				t.Fatalf("Tokenize = %v (fields %v), want Invalid at %s saying %q", err, fieldsOf(err), tc.path, tc.msg)
			}
			if d, _ := tc.body["data"].(string); strings.Contains(err.Error()+strings.Join(te.Fields[tc.path], " "), d) {
				t.Errorf("the error quotes the data")
			}
		})
	}
	page, err := e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{})
	if err != nil || len(page.Data) != 0 {
		t.Errorf("refused requests left tokens: %v, %v", page, err)
	}
}

func fieldsOf(err error) map[string][]string {
	var te *tokenvault.Error
	if errors.As(err, &te) {
		return te.Fields
	}
	return nil
}

// TestAliasForcedCollision: with randomness that always gives the same
// alias, a second token whose alias would be the first's is a Conflict
// naming the reason, in CreateToken and within one Tokenize (which then
// creates nothing); with randomness that repeats the first alias once and
// then moves on, the second token gets a new alias in the same call.
func TestAliasForcedCollision(t *testing.T) {
	const expr = "{{ data.number | alias_card: true, true }}"
	t.Run("always the same", func(t *testing.T) {
		e := newAliasEnv(t, constantRand(3))
		app := e.Reader(t, "reveal", "token:create", "token:read")
		first, err := e.V.CreateToken(ctx, app.Key, aliasCardRequest(vaulttest.Visa, expr))
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.V.CreateToken(ctx, app.Key, aliasCardRequest(vaulttest.Visa, expr))
		vaulttest.WantKind(t, "CreateToken(colliding alias)", err, tokenvault.Conflict)
		if !strings.Contains(err.Error(), "no free alias") {
			t.Errorf("err = %v, want it to name the reason", err)
		}
		// Two in one request: the second collides with the first, and
		// neither is created.
		req := map[string]any{"type": "token", "id": "{{ data | alias_card: false, true }}", "data": "5555 5555 5555 4444"}
		_, err = e.V.Tokenize(ctx, app.Key, []any{req, req})
		vaulttest.WantKind(t, "Tokenize(two colliding aliases)", err, tokenvault.Conflict)
		page, err := e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{})
		if err != nil || len(page.Data) != 1 || page.Data[0].ID != first.ID {
			t.Errorf("tokens after the collisions = %v, %v; want only the first", page, err)
		}
	})
	t.Run("drawn again", func(t *testing.T) {
		// Each draw reads 64 bytes: the first token draws zeros, the
		// second draws zeros (taken) and then ones.
		r := bytes.NewReader(append(make([]byte, 128), bytes.Repeat([]byte{1}, 64)...))
		e := newAliasEnv(t, r)
		app := e.Reader(t, "reveal", "token:create", "token:read")
		a, err := e.V.CreateToken(ctx, app.Key, aliasCardRequest(vaulttest.Visa, expr))
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.V.CreateToken(ctx, app.Key, aliasCardRequest(vaulttest.Visa, expr))
		if err != nil {
			t.Fatalf("second token = %v, want a new alias drawn", err)
		}
		if a.ID == b.ID || b.ID[:8] != vaulttest.Visa[:8] || b.ID[12:] != vaulttest.Visa[12:] {
			t.Errorf("aliases %q and %q: want two aliases keeping BIN and last four", a.ID, b.ID)
		}
	})
	t.Run("failing randomness", func(t *testing.T) {
		e := newAliasEnv(t, iotestErrReader{})
		app := e.Reader(t, "reveal", "token:create")
		_, err := e.V.CreateToken(ctx, app.Key, aliasCardRequest(vaulttest.Visa, expr))
		vaulttest.WantKind(t, "CreateToken(Rand fails)", err, tokenvault.Internal)
	})
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("entropy source gone") }

// TestAliasNoRoom: a 12-digit number revealing its BIN (6) and last four
// leaves two random digits, 90 aliases failing Luhn: once they are taken,
// the next token is a Conflict, never a UUID or a duplicate id.
func TestAliasNoRoom(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read")
	seen := map[string]bool{}
	var conflict error
	for range 200 {
		tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "424242424242",
			ID: "{{ data | alias_card: true, true }}"})
		if err != nil {
			conflict = err
			break
		}
		if seen[tok.ID] || len(tok.ID) != 12 || tok.ID[:6] != "424242" || tok.ID[8:] != "4242" || luhnDigits(tok.ID) {
			t.Fatalf("alias %q: repeated, or not a Luhn-failing alias keeping BIN and last four", tok.ID)
		}
		seen[tok.ID] = true
	}
	vaulttest.WantKind(t, "CreateToken with no alias left", conflict, tokenvault.Conflict)
	if len(seen) > 90 {
		t.Errorf("%d aliases of 2 random digits failing Luhn; at most 90 exist", len(seen))
	}
}

// TestAliasCardDisplayRule: an alias and a mask together show at most the
// BIN and last four of a card number.
func TestAliasCardDisplayRule(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read")
	amex := "378282246310005" // 15 digits: BIN of 6
	tests := []struct {
		name, number, id string
		mask             any
		ok               bool
		field            string // where a refusal is, "id" if empty
	}{
		{"bin and last4 with the default mask", vaulttest.Visa, "{{ data.number | alias_card: true, true }}", nil, true, ""},
		{"bin and last4 with card_mask", vaulttest.Visa, "{{ data.number | alias_card: true, true }}", map[string]any{"number": "{{ data.number | card_mask }}"}, true, ""},
		{"no reveal with a mask of the first ten", vaulttest.Visa, "{{ data.number | alias_card }}", "{{ data.number | slice: 0, 10 }}", false, "mask"},
		{"bin with a mask of the first ten", vaulttest.Visa, "{{ data.number | alias_card: true }}", "{{ data.number | slice: 0, 10 }}", false, "mask"},
		{"bin of 8 on 15 digits", amex, "{{ data.number | alias_preserve_format: 8 }}", nil, false, ""},
		{"bin of 6 on 15 digits", amex, "{{ data.number | alias_card: true, true }}", nil, true, ""},
		{"alias keeping ten", vaulttest.Visa, "{{ data.number | alias_preserve_format: 10 }}", nil, false, ""},
		{"mask showing a middle digit", vaulttest.Visa, "{{ data.number | alias_card: true, true }}", "{{ data.number | slice: 9 }}", false, "mask"},
		{"mask hashing the number", vaulttest.Visa, "{{ data.number | alias_card }}", "{{ data.number | hmac: 'sha256', 'k' }}", false, "mask"},
		{"alias of the expiry only", vaulttest.Visa, "{{ data.expiration_year | alias_preserve_length }}x", "{{ data.number | card_mask }}", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := aliasCardRequest(tc.number, tc.id)
			req.Mask = tc.mask
			_, err := e.V.CreateToken(ctx, app.Key, req)
			if tc.ok {
				if err != nil {
					t.Fatalf("CreateToken = %v, want it allowed", err)
				}
				return
			}
			field := tc.field
			if field == "" {
				field = "id"
			}
			vaulttest.WantField(t, err, field)
			if !strings.Contains(strings.Join(fieldsOf(err)[field], ""), "PCI DSS") {
				t.Errorf("err = %v, want the display rule named", fieldsOf(err))
			}
		})
	}
	// A plain token holding a card number is held to the same rule.
	_, err := e.V.Tokenize(ctx, app.Key, map[string]any{"type": "token", "data": "4242-4242-4242-4242",
		"id": "{{ data | alias_card: true }}", "mask": "{{ data | reveal: 12, 0 }}"})
	vaulttest.WantField(t, err, "mask")
	_, err = e.V.Tokenize(ctx, app.Key, map[string]any{"type": "token", "data": "4242-4242-4242-4242",
		"id": "{{ data | alias_preserve_format: 12 }}", "mask": "{{ data | reveal_last: 4 }}"})
	vaulttest.WantField(t, err, "id")
}

// TestAliasDeduplication: a deduplicating request that matches a token
// gets that token and its alias, even when no alias would be free.
func TestAliasDeduplication(t *testing.T) {
	e := newAliasEnv(t, constantRand(5))
	app := e.Reader(t, "reveal", "token:create", "token:read")
	req := aliasCardRequest(vaulttest.Visa, "{{ data.number | alias_card: true, true }}")
	req.DeduplicateToken = true
	first, err := e.V.CreateToken(ctx, app.Key, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.V.CreateToken(ctx, app.Key, req)
	if err != nil || again.ID != first.ID {
		t.Fatalf("deduplicated create = %v, %v; want the existing token %s", again, err, first.ID)
	}
	// A request with a literal id is deduplicated the same way.
	lit := aliasCardRequest(vaulttest.Visa, "my-card-1")
	lit.DeduplicateToken = true
	if tok, err := e.V.CreateToken(ctx, app.Key, lit); err != nil || tok.ID != first.ID {
		t.Fatalf("deduplicated create with a literal id = %v, %v; want the alias token", tok, err)
	}
	// An alias token wins over a later alias request of another shape.
	other := aliasCardRequest(vaulttest.Visa, "{{ data.number | alias_preserve_length: 0, 4 }}")
	other.DeduplicateToken = true
	if tok, err := e.V.CreateToken(ctx, app.Key, other); err != nil || tok.ID != first.ID {
		t.Fatalf("deduplicated create with another alias = %v, %v; want the first token", tok, err)
	}
}

// TestIDsWithSpaces: spaces inside an id are allowed (aliases keep them),
// around it they are not.
func TestIDsWithSpaces(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read")
	if _, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x", ID: "a b c"}); err != nil {
		t.Errorf("id with inner spaces: %v", err)
	}
	for _, id := range []string{" abc", "abc ", "a\tbc", "a\u00a0b\nc"} {
		_, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x", ID: id})
		vaulttest.WantField(t, err, "id")
	}
}

// TestAliasInTenantCode: tenant code's client.tokenize takes an alias id,
// and a reactor's args detokenize {{ <alias> }}.
func TestAliasInTenantCode(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read", "token:use")
	spaced, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "4242 4242 4242 4242",
		ID: "{{ data | alias_card: false, true }}"})
	if err != nil {
		t.Fatal(err)
	}
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Application: &tokenvault.Ref{ID: app.ID}, Code: `
module.exports = async function (req) {
	const made = await req.client.tokenize({type: "token", id: "{{ data | alias_preserve_format: 0, 4 }}", data: "123-45-6789", mask: "{{ data | reveal_last: 4 }}"});
	const back = await req.client.getToken(made.id);
	return {raw: {id: made.id, data: back.data, arg: req.args.card}};
};`})
	out, err := e.V.InvokeReactor(ctx, app.Key, r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"card": "{{ " + spaced.ID + " }}"}})
	if err != nil {
		t.Fatalf("InvokeReactor: %v", err)
	}
	raw := vaulttest.RoundTrip(t, out.Raw).(map[string]any)
	id, _ := raw["id"].(string)
	if len(id) != 11 || id[3] != '-' || id[7:] != "6789" || raw["data"] != "123-45-6789" {
		t.Errorf("client.tokenize with an alias id gave %v", raw)
	}
	if raw["arg"] != "4242 4242 4242 4242" {
		t.Errorf("reactor arg {{ <alias> }} = %v, want the data", raw["arg"])
	}
}

// TestAliasDisplayRuleOnPatch: a patch's mask is held to the display rule
// for a token with an alias id, in every later patch too, and not for a
// token without one.
func TestAliasDisplayRuleOnPatch(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, "reveal", "token:create", "token:read", "token:update")
	alias, err := e.V.CreateToken(ctx, app.Key, aliasCardRequest(vaulttest.Visa, "{{ data.number | alias_card: true, true }}"))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := e.V.CreateToken(ctx, app.Key, aliasCardRequest(vaulttest.Visa, ""))
	if err != nil {
		t.Fatal(err)
	}
	firstTen := json.RawMessage(`{"mask": {"number": "{{ data.number | slice: 0, 10 }}"}}`)
	_, err = e.V.UpdateToken(ctx, app.Key, alias.ID, firstTen)
	vaulttest.WantField(t, err, "mask")
	if !strings.Contains(strings.Join(fieldsOf(err)["mask"], ""), "PCI DSS") {
		t.Errorf("err = %v, want the display rule named", fieldsOf(err))
	}
	if _, err := e.V.UpdateToken(ctx, app.Key, alias.ID, json.RawMessage(`{"mask": {"number": "{{ data.number | card_mask }}"}}`)); err != nil {
		t.Fatalf("patching a mask within the rule = %v", err)
	}
	if _, err := e.V.UpdateToken(ctx, app.Key, alias.ID, json.RawMessage(`{"metadata": {"k": "v"}}`)); err != nil {
		t.Fatal(err)
	}
	_, err = e.V.UpdateToken(ctx, app.Key, alias.ID, firstTen)
	vaulttest.WantField(t, err, "mask")
	if got, err := e.V.GetToken(ctx, app.Key, alias.ID); err != nil || !strings.Contains(string(vaulttest.MustJSON(got.Mask)), "XXXXXX") {
		t.Errorf("mask after the refused patches = %v, %v; want card_mask's", got, err)
	}
	// A card's mask is held to the rule whatever its id.
	_, err = e.V.UpdateToken(ctx, app.Key, plain.ID, firstTen)
	vaulttest.WantField(t, err, "mask")
}

// TestAliasOfAnExpiredToken: an alias held by an expired token is taken
// over, as a literal id is: the old token is deleted and the new one gets
// the alias.
func TestAliasOfAnExpiredToken(t *testing.T) {
	e := newAliasEnv(t, constantRand(6))
	app := e.Reader(t, "reveal", "token:create", "token:read")
	req := aliasCardRequest(vaulttest.Visa, "{{ data.number | alias_card: true, true }}")
	soon := e.Clock.Now().Add(time.Minute)
	req.ExpiresAt = &soon
	old, err := e.V.CreateToken(ctx, app.Key, req)
	if err != nil {
		t.Fatal(err)
	}
	req.ExpiresAt = nil
	_, err = e.V.CreateToken(ctx, app.Key, req)
	vaulttest.WantKind(t, "CreateToken(alias of a live token)", err, tokenvault.Conflict)
	e.Clock.Advance(2 * time.Minute)
	tok, err := e.V.CreateToken(ctx, app.Key, req)
	if err != nil || tok.ID != old.ID {
		t.Fatalf("CreateToken(alias of an expired token) = %v, %v; want the alias %s again", tok, err, old.ID)
	}
	got, err := e.V.GetToken(ctx, app.Key, old.ID)
	if err != nil || got.ExpiresAt != nil {
		t.Errorf("GetToken(alias) = %+v, %v; want the new token, without expiry", got, err)
	}
}

// TestAliasInProxyBody: a proxy body detokenizes {{ <alias> }}, spaces and
// all.
func TestAliasInProxyBody(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	spaced := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "4242 4242 4242 4242", ID: "{{ data | alias_card: true, true }}"})
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL})
	if _, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, e.User(t), "/pay", `{"n": "{{ `+spaced.ID+` }}"}`)); err != nil {
		t.Fatalf("InvokeProxy: %v", err)
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	if d.Body != `{"n":"4242 4242 4242 4242"}` {
		t.Errorf("destination body = %s, want the data of the alias", d.Body)
	}
}
