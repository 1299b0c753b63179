package tokens_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// luhnCandidates returns n Luhn-valid 16-digit numbers, right among them at
// index at: an attacker's guesses at a stored card.
func luhnCandidates(n int, right string, at int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		base := fmt.Sprintf("4000%011d", i)
		for d := '0'; d <= '9'; d++ {
			if num := base + string(d); vaulttest.LuhnValid(num) && num != right {
				out = append(out, num)
				break
			}
		}
	}
	out[at] = right
	return out
}

// secretCard is the card the attack is after, stored by an administrator
// with metadata and a search index.
const (
	secretMetadata = "alice-private-ref"
	rightAt        = 37
)

// guessCard is a card request for a guessed number.
func guessCard(number string, dedupe bool) map[string]any {
	return map[string]any{"type": "card", "deduplicate_token": dedupe,
		"data": map[string]any{"number": number, "expiration_month": 12, "expiration_year": 2031}}
}

// answerCheck holds what every answer to the attacker must satisfy, and
// the answers seen so far, so that the right guess can be compared with
// the wrong ones.
type answerCheck struct {
	stored *tokenvault.Token
	// normal maps what a response is about ("tokenize", "tokenize dedupe")
	// to the first normalized answer seen.
	normal map[string]map[string]any
}

// check asserts that one token object answered to the attacker for its own
// guess tells nothing of the stored card: no fingerprint, no stored id,
// data and mask only as computed from the guess itself, and otherwise the
// same answer for every guess.
func (c *answerCheck) check(t *testing.T, what, guess string, tok any) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(vaulttest.MustJSON(tok)), &m); err != nil {
		t.Fatal(err)
	}
	text := vaulttest.MustJSON(m)
	if _, ok := m["fingerprint"]; ok {
		t.Fatalf("%s: answer carries a fingerprint: %s", what, text)
	}
	if m["id"] == c.stored.ID {
		t.Fatalf("%s: answer is the stored token %s", what, text)
	}
	if strings.Contains(text, secretMetadata) || strings.Contains(text, c.stored.Fingerprint) {
		t.Fatalf("%s: answer carries the stored token's metadata or fingerprint: %s", what, text)
	}
	ownMask := map[string]any{"number": strings.Repeat("X", len(guess)-4) + guess[len(guess)-4:],
		"expiration_month": float64(12), "expiration_year": float64(2031)}
	for _, k := range []string{"mask", "data"} {
		if v, ok := m[k]; ok && !cmp.Equal(v, ownMask) {
			t.Fatalf("%s: %s = %v, want the mask of the guess %v", what, k, v, ownMask)
		}
	}
	for _, k := range []string{"id", "mask", "data", "created_at"} {
		delete(m, k)
	}
	if c.normal == nil {
		c.normal = map[string]map[string]any{}
	}
	first, ok := c.normal[what]
	if !ok {
		c.normal[what] = m
		return
	}
	if diff := cmp.Diff(first, m); diff != "" {
		t.Fatalf("%s: the answer for %s differs from another guess's (-first +this):\n%s", what, guess, diff)
	}
}

// TestKeysLearnOnlyWhatTheyMayRead is issue 18's attack: a public key with
// token:create and token:update only must not recover a stored card number
// from PATCH answers, fingerprints or deduplication.
func TestKeysLearnOnlyWhatTheyMayRead(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		admin := e.Reader(t, "reveal", "token:create", "token:read", "token:update")
		stored, err := e.V.CreateToken(ctx, admin.Key, tokenvault.TokenRequest{Type: "card",
			Data:          map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031},
			Metadata:      map[string]string{"customer": secretMetadata},
			SearchIndexes: []string{"{{ data.number | last4 }}"}})
		if err != nil || stored.Fingerprint == "" {
			t.Fatalf("admin CreateToken = %+v, %v; want a fingerprint for a reader", stored, err)
		}
		attacker := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate, tokenvault.PermTokenUpdate)

		// PATCH answers name the token, nothing of its content.
		patched, err := e.V.UpdateToken(ctx, attacker.Key, stored.ID, json.RawMessage(`{"metadata": {"note": "x"}}`))
		if err != nil {
			t.Fatalf("UpdateToken by the attacker: %v", err)
		}
		var pm map[string]any
		json.Unmarshal([]byte(vaulttest.MustJSON(patched)), &pm)
		wantKeys := []string{"containers", "created_at", "created_by", "id", "modified_at", "modified_by", "tenant_id", "type"}
		if got := slices.Sorted(maps.Keys(pm)); !slices.Equal(got, wantKeys) {
			t.Errorf("PATCH answer fields = %v, want %v (%s)", got, wantKeys, vaulttest.MustJSON(patched))
		}

		c := &answerCheck{stored: stored}
		guesses := luhnCandidates(100, vaulttest.Visa, rightAt)
		var batch []any
		for _, g := range guesses {
			for _, dedupe := range []bool{false, true} {
				what := fmt.Sprintf("Tokenize(dedupe=%v)", dedupe)
				tok, err := e.V.Tokenize(ctx, attacker.Key, guessCard(g, dedupe))
				if err != nil {
					t.Fatalf("%s(%s): %v", what, g, err)
				}
				c.check(t, what, g, tok)
				req := tokenvault.TokenRequest{Type: "card", DeduplicateToken: dedupe,
					Data: map[string]any{"number": g, "expiration_month": 12, "expiration_year": 2031}}
				one, err := e.V.CreateToken(ctx, attacker.Key, req)
				if err != nil {
					t.Fatalf("CreateToken(%s): %v", g, err)
				}
				c.check(t, fmt.Sprintf("CreateToken(dedupe=%v)", dedupe), g, one)
			}
			batch = append(batch, guessCard(g, true))
		}
		// The same guesses in one body, as an array and nested in an object.
		out, err := e.V.Tokenize(ctx, attacker.Key, map[string]any{"cards": batch})
		if err != nil {
			t.Fatal(err)
		}
		for i, tok := range out.(map[string]any)["cards"].([]any) {
			c.check(t, "Tokenize(nested array)", guesses[i], tok)
		}

		// An expired stored card: a patch sending the right number and
		// expiry is answered like one sending a wrong number.
		e.Clock.Advance(2 * 366 * 24 * 3600 * 1e9)
		var answers []string
		for _, g := range []string{guesses[0], vaulttest.Visa} {
			_, err := e.V.UpdateToken(ctx, attacker.Key, stored.ID, json.RawMessage(
				`{"data": {"number": "`+g+`", "expiration_month": 12, "expiration_year": 2031}}`))
			answers = append(answers, fmt.Sprintf("%v %v", tokenvault.ErrorKind(err), err))
		}
		if answers[0] != answers[1] {
			t.Errorf("patching an expired card: wrong guess %q, right guess %q; want the same answer", answers[0], answers[1])
		}

		// The administrator still sees everything, and the attack changed
		// nothing but the metadata it added.
		got, err := e.V.GetToken(ctx, admin.Key, stored.ID)
		if err != nil || got.Data.(map[string]any)["number"] != vaulttest.Visa || got.Fingerprint != stored.Fingerprint ||
			got.Metadata["customer"] != secretMetadata {
			t.Errorf("GetToken by the admin = %+v, %v", got, err)
		}
	})
}

// TestReadersKeepFingerprintsAndDeduplication: a key that reads in clear
// (reveal) gets fingerprints and deduplicates, one that redacts does not; a key that reads one
// container only deduplicates there, and search shows fingerprints only of
// tokens the key may read.
func TestReadersKeepFingerprintsAndDeduplication(t *testing.T) {
	e := vaulttest.NewEnv(t)
	admin := e.Reader(t, "reveal", "token:create", "token:read")
	stored, err := e.V.CreateToken(ctx, admin.Key, vaulttest.CardRequest(vaulttest.Visa))
	if err != nil {
		t.Fatal(err)
	}
	redacted := e.Reader(t, "redact", "token:create", "token:read")
	again, err := e.V.CreateToken(ctx, redacted.Key, tokenvault.TokenRequest{Type: "card", DeduplicateToken: true,
		Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 1, "expiration_year": 2033}})
	if err != nil || again.ID == stored.ID || again.Fingerprint != "" || again.Data != nil {
		t.Errorf("dedupe by a redact reader = %+v, %v; want a new token, redacted, without a fingerprint", again, err)
	}
	revealer := e.Reader(t, "reveal", "token:create", "token:read")
	again, err = e.V.CreateToken(ctx, revealer.Key, tokenvault.TokenRequest{Type: "card", DeduplicateToken: true,
		Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 1, "expiration_year": 2033}})
	if err != nil || again.ID != stored.ID || again.Fingerprint != stored.Fingerprint {
		t.Errorf("dedupe by a reveal reader = %+v, %v; want the stored token with its fingerprint", again, err)
	}

	// token:search everywhere, token:read nowhere: search hides
	// fingerprints and does not match on them.
	searcher, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "s", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenSearch}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := e.V.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: "type:card"})
	if err != nil || len(page.Data) != 2 || page.Data[0].Fingerprint != "" || page.Data[1].Fingerprint != "" {
		t.Errorf("search by a non-reader = %+v, %v; want the two cards without fingerprints", page, err)
	}
	// A fingerprint term reads fingerprints: PermissionDenied whatever
	// the value, as ListTokens by fingerprint.
	page, err = e.V.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: "fingerprint:" + stored.Fingerprint})
	if tokenvault.ErrorKind(err) != tokenvault.PermissionDenied {
		t.Errorf("search by fingerprint by a non-reader = %+v, %v; want PermissionDenied", page, err)
	}
	page, err = e.V.SearchTokens(ctx, admin.Key, tokenvault.SearchTokensRequest{Query: "fingerprint:" + stored.Fingerprint})
	if err == nil {
		t.Errorf("admin has no token:search, search = %+v", page)
	}
}

// TestUpdateCannotMoveTokensToWiderReads: token:update on two containers
// must not let a key move a token it cannot read to where it can.
func TestUpdateCannotMoveTokensToWiderReads(t *testing.T) {
	e := vaulttest.NewEnv(t)
	stored := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	mover, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "m", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{
			{Priority: 1, Container: "/mine/", Transform: "reveal", Permissions: []string{"token:read", "token:update"}},
			{Priority: 2, Container: "/", Transform: "redact", Permissions: []string{"token:update"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.V.UpdateToken(ctx, mover.Key, stored.ID, json.RawMessage(`{"containers": ["/mine/"]}`))
	vaulttest.WantKind(t, "moving a card to a container the key reads", err, tokenvault.PermissionDenied)
	if _, err := e.V.UpdateToken(ctx, mover.Key, stored.ID, json.RawMessage(`{"containers": ["/pci/low/"]}`)); err != nil {
		t.Errorf("moving between containers the key does not read: %v", err)
	}
}

// TestTakenCustomIDsTellNothing: a custom id that exists is the same
// Conflict whatever the existing token's container, type, and whether the
// caller could read it.
func TestTakenCustomIDsTellNothing(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		admin := e.Reader(t, "reveal", "token:create", "token:read")
		for _, req := range []tokenvault.TokenRequest{
			{ID: "order-unreadable", Type: "card", Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031}},
			{ID: "order-readable", Type: "token", Data: "x", Containers: []string{"/mine/"}},
		} {
			if _, err := e.V.CreateToken(ctx, admin.Key, req); err != nil {
				t.Fatal(err)
			}
		}
		caller, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "c", Type: tokenvault.Private,
			Rules: []tokenvault.AccessRule{
				{Priority: 1, Container: "/mine/", Transform: "reveal", Permissions: []string{"token:read", "token:create"}},
				{Priority: 2, Container: "/", Transform: "redact", Permissions: []string{"token:create"}},
			}})
		if err != nil {
			t.Fatal(err)
		}
		var answers []string
		for _, id := range []string{"order-unreadable", "order-readable"} {
			for _, req := range []tokenvault.TokenRequest{
				{ID: id, Type: "token", Data: "y", Containers: []string{"/mine/"}},
				{ID: id, Type: "bank", Data: map[string]any{"routing_number": "011000015", "account_number": "1234567"}, Containers: []string{"/other/"}},
			} {
				_, err := e.V.CreateToken(ctx, caller.Key, req)
				vaulttest.WantKind(t, "CreateToken(taken id "+id+")", err, tokenvault.Conflict)
				var te *tokenvault.Error
				vaulttest.AsError(err, &te)
				answers = append(answers, vaulttest.MustJSON(map[string]any{"message": te.Message, "fields": te.Fields}))
				_, err = e.V.Tokenize(ctx, caller.Key, []any{map[string]any{"id": id, "type": req.Type, "data": req.Data, "containers": req.Containers}})
				answers = append(answers, fmt.Sprint(err))
			}
		}
		for i := 2; i < len(answers); i++ {
			if answers[i] != answers[i%2] {
				t.Errorf("taken id answers differ: %q and %q", answers[i%2], answers[i])
			}
		}
		if strings.Contains(strings.Join(answers, " "), "/") || strings.Contains(strings.Join(answers, " "), "card") {
			t.Errorf("a taken id answer names a container or type: %v", answers)
		}
	})
}

// TestReactorsLearnOnlyWhatTheirApplicationMayRead: the tokens a reactor
// returns under tokenize, and what req.client.tokenize answers its code,
// follow the same rules for the reactor's public application.
func TestReactorsLearnOnlyWhatTheirApplicationMayRead(t *testing.T) {
	e := vaulttest.NewEnv(t)
	admin := e.Reader(t, "reveal", "token:create", "token:read")
	stored, err := e.V.CreateToken(ctx, admin.Key, vaulttest.CardRequest(vaulttest.Visa))
	if err != nil {
		t.Fatal(err)
	}
	public := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate, tokenvault.PermTokenUpdate)
	code := `module.exports = async function (req) {
		const card = {type: "card", deduplicate_token: true,
			data: {number: "` + vaulttest.Visa + `", expiration_month: 12, expiration_year: 2031}};
		return {raw: {client: req.client.tokenize(card)}, tokenize: {card: card}};
	};`
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: code, Configuration: map[string]any{},
		Application: &tokenvault.Ref{ID: public.ID}})
	out, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{})
	if err != nil {
		t.Fatalf("InvokeReactor: %v", err)
	}
	text := vaulttest.MustJSON(out)
	if strings.Contains(text, `"fingerprint":`) || strings.Contains(text, stored.ID) || strings.Contains(text, stored.Fingerprint) {
		t.Errorf("reactor answer tells of the stored card: %s", text)
	}
	if !strings.Contains(text, "XXXXXXXXXXXX4242") {
		t.Errorf("reactor answer %s lacks the masks of the reactor's own cards", text)
	}
}

// TestPatchAnswersDoNotDependOnStoredFields: a key that may not read a
// token, patching its data with a new mask, gets the same answer whether or
// not the stored data has fields its patch does not send (here a cvc): its
// data replaces the stored data whole.
func TestPatchAnswersDoNotDependOnStoredFields(t *testing.T) {
	e := vaulttest.NewEnv(t)
	admin := e.Reader(t, "reveal", "token:create", "token:read")
	attacker := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate, tokenvault.PermTokenUpdate)
	var answers []string
	for _, data := range []map[string]any{
		{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031, "cvc": "123"},
		{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031},
	} {
		stored, err := e.V.CreateToken(ctx, admin.Key, tokenvault.TokenRequest{Type: "card", Data: data})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.V.UpdateToken(ctx, attacker.Key, stored.ID, json.RawMessage(
			`{"data": {"number": "`+vaulttest.Mastercard+`", "expiration_month": 1, "expiration_year": 2032}, "mask": "{{ data.number | last4 }}"}`))
		var fields []string
		if got != nil {
			var m map[string]any
			json.Unmarshal([]byte(vaulttest.MustJSON(got)), &m)
			fields = slices.Sorted(maps.Keys(m))
		}
		answers = append(answers, fmt.Sprintf("%v %v", tokenvault.ErrorKind(err), fields))
		after, err := e.V.GetToken(ctx, admin.Key, stored.ID)
		if err != nil || vaulttest.CVCOf(after) != "" || after.Data.(map[string]any)["number"] != vaulttest.Mastercard {
			t.Errorf("after the patch the card is %+v, %v; want the patch's data whole", after, err)
		}
	}
	if answers[0] != answers[1] {
		t.Errorf("answers differ with and without a stored cvc: %q, %q", answers[0], answers[1])
	}
}

// TestPatchExpressionsTellNothing: a key that may not read a token, setting
// a mask, search index or fingerprint expression over data it does not
// send, is refused before the expression is evaluated: whether it would
// have failed over the stored data (a guessed digit that is wrong) made
// 400 against 403 an oracle, which read a stored card number a digit at a
// time. A masking key is refused the same way.
func TestPatchExpressionsTellNothing(t *testing.T) {
	e := vaulttest.NewEnv(t)
	admin := e.Reader(t, "reveal", "token:create", "token:read")
	stored, err := e.V.CreateToken(ctx, admin.Key, vaulttest.CardRequest(vaulttest.Visa))
	if err != nil {
		t.Fatal(err)
	}
	attacker := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate, tokenvault.PermTokenUpdate)
	masker := e.Reader(t, "mask", "token:update")
	for _, key := range []tokenvault.Credential{attacker.Key, masker.Key} {
		var answers []string
		for _, digit := range []string{vaulttest.Visa[:1], "5"} {
			guess := `{{ data.number | slice: 0, 1 | replace: \"` + digit + `\", \"true\" | to_boolean }}`
			for _, field := range []string{`"mask": "` + guess + `"`, `"search_indexes": ["` + guess + `"]`, `"fingerprint_expression": "` + guess + `"`} {
				_, err := e.V.UpdateToken(ctx, key, stored.ID, json.RawMessage(`{`+field+`}`))
				answers = append(answers, fmt.Sprintf("%v", err))
				vaulttest.WantKind(t, "an expression over stored data", err, tokenvault.PermissionDenied)
			}
		}
		if answers[0] != answers[3] || answers[1] != answers[4] || answers[2] != answers[5] {
			t.Errorf("the right digit and a wrong one are answered differently: %q", answers)
		}
	}
}
