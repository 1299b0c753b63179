package behaviour_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

var ctx = context.Background()

// importer is a private application that may import and create (and read,
// to compare) everywhere.
func importer(t *testing.T, e *vaulttest.Env) tokenvault.Credential {
	t.Helper()
	a, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "importer", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenImport, tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenSearch},
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal",
			Permissions: []string{"token:create", "token:read", "token:search"}}},
	})
	if err != nil {
		t.Fatalf("CreateApplication(importer): %v", err)
	}
	return a.Key
}

func cardLine(n int64, id string) tokenvault.ImportLine {
	created := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	return tokenvault.ImportLine{Number: n, ID: id, Type: "card", CreatedAt: &created,
		Data:     map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2035},
		Metadata: map[string]string{"customer": "c-" + id}, SearchIndexes: []string{"{{ data.number }}"}}
}

// TestImportKeepsIDsAndCreatesAsTokenize imports a card and a plain token
// and reads them back: ids and created_at kept, everything else as a
// tokenize of the same request would make it.
func TestImportKeepsIDsAndCreatesAsTokenize(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		key := importer(t, e)
		lines := []tokenvault.ImportLine{cardLine(1, "card_0001"),
			{Number: 2, ID: "6f1c2c3e-0a4b-4c5d-8e9f-0123456789ab", Type: "token", Data: "hello world"}}
		res, err := e.V.ImportTokens(ctx, key, tokenvault.ImportBatch{Lines: lines})
		if err != nil {
			t.Fatalf("ImportTokens: %v", err)
		}
		if res.Imported != 2 || res.Skipped != 0 || res.Rejected != 0 {
			t.Fatalf("ImportTokens = %+v, want 2 imported", res)
		}
		got, err := e.V.GetToken(ctx, key, "card_0001")
		if err != nil {
			t.Fatalf("GetToken: %v", err)
		}
		if !got.CreatedAt.Equal(*lines[0].CreatedAt) {
			t.Errorf("created_at = %v, want %v", got.CreatedAt, lines[0].CreatedAt)
		}
		twin, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{ID: "card_0002", Type: "card",
			Data: lines[0].Data, Metadata: lines[0].Metadata, SearchIndexes: lines[0].SearchIndexes})
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		twin, _ = e.V.GetToken(ctx, key, twin.ID)
		ignore := func(tok *tokenvault.Token) tokenvault.Token {
			c := *tok
			c.ID, c.CreatedAt, c.Metadata = "", time.Time{}, nil
			return c
		}
		if diff := cmp.Diff(ignore(twin), ignore(got)); diff != "" {
			t.Errorf("imported token differs from a created one (-created +imported):\n%s", diff)
		}
		found, err := e.V.SearchTokens(ctx, key, tokenvault.SearchTokensRequest{Query: "data:" + vaulttest.Visa})
		if err != nil || len(found.Data) != 2 {
			t.Fatalf("SearchTokens(data:4242) = %v, %v; want both tokens", found, err)
		}
	})
}

// TestImportRejectsAndCarriesOn sends a batch with bad lines among good
// ones: each bad line comes back with its number and reason (never its
// data), the good ones are created.
func TestImportRejectsAndCarriesOn(t *testing.T) {
	e := vaulttest.NewEnv(t)
	key := importer(t, e)
	if _, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{ID: "taken", Type: "token", Data: "other"}); err != nil {
		t.Fatal(err)
	}
	badCard := cardLine(4, "card_bad")
	badCard.Data = map[string]any{"number": "4242424242424241", "expiration_month": 12, "expiration_year": 2035}
	lines := []tokenvault.ImportLine{
		cardLine(1, "card_ok"),
		{Number: 2, ID: "taken", Type: "token", Data: "mine"},
		{Number: 3, ID: "tok_" + vaulttest.Mastercard, Type: "card", Data: map[string]any{"number": vaulttest.Mastercard, "expiration_month": 1, "expiration_year": 2036}},
		badCard,
		{Number: 5, Problem: "not valid JSON"},
		{Number: 6, ID: "card_ok", Type: "token", Data: "again"},
		{Number: 7, ID: "plain_ok", Type: "token", Data: "x"},
		{Number: 8, ID: "has space", Type: "token", Data: "y"},
	}
	res, err := e.V.ImportTokens(ctx, key, tokenvault.ImportBatch{Lines: lines})
	if err != nil {
		t.Fatalf("ImportTokens: %v", err)
	}
	want := []tokenvault.ImportReject{
		{Line: 2, Reason: "id: exists, with other contents"},
		{Line: 3, Reason: "id: carries the data (see the import id rule)"},
		{Line: 4, Reason: "data.number: "},
		{Line: 5, Reason: "not valid JSON"},
		{Line: 6, Reason: "id: given by an earlier line of the batch"},
		{Line: 8, Reason: "id: must be a UUID or letters, digits and - _ . : only"},
	}
	if res.Imported != 2 || res.Rejected != len(want) {
		t.Fatalf("ImportTokens = %+v, want 2 imported, %d rejected", res, len(want))
	}
	for i, r := range res.Rejects {
		if r.Line != want[i].Line || !strings.HasPrefix(r.Reason, want[i].Reason) {
			t.Errorf("reject %d = %+v, want %+v", i, r, want[i])
		}
		if strings.Contains(r.Reason, "4242") || strings.Contains(r.Reason, "mine") {
			t.Errorf("reject %d = %+v quotes the data", i, r)
		}
	}
	if _, err := e.V.GetToken(ctx, key, "plain_ok"); err != nil {
		t.Errorf("GetToken(plain_ok) = %v, want the imported token", err)
	}
}

// TestImportAgainSkips re-sends a committed batch (a resumed import):
// every line counts skipped, nothing is created twice; a line whose id
// holds another token is rejected.
func TestImportAgainSkips(t *testing.T) {
	e := vaulttest.NewEnv(t)
	key := importer(t, e)
	batch := tokenvault.ImportBatch{Lines: []tokenvault.ImportLine{cardLine(1, "a01"), cardLine(2, "a02")}}
	if res, err := e.V.ImportTokens(ctx, key, batch); err != nil || res.Imported != 2 {
		t.Fatalf("ImportTokens = %+v, %v", res, err)
	}
	res, err := e.V.ImportTokens(ctx, key, batch)
	if err != nil || res.Imported != 0 || res.Skipped != 2 || res.Rejected != 0 {
		t.Fatalf("ImportTokens again = %+v, %v; want 2 skipped", res, err)
	}
	changed := cardLine(1, "a01")
	changed.Metadata = map[string]string{"customer": "someone else"}
	res, err = e.V.ImportTokens(ctx, key, tokenvault.ImportBatch{Lines: []tokenvault.ImportLine{changed}})
	if err != nil || res.Rejected != 1 {
		t.Fatalf("ImportTokens(changed) = %+v, %v; want 1 rejected", res, err)
	}
	// An expired token of the id is replaced, as a create replaces it.
	soon := e.Clock.Now().Add(time.Minute)
	if _, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{ID: "old_1", Type: "token", Data: "x", ExpiresAt: &soon}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	res, err = e.V.ImportTokens(ctx, key, tokenvault.ImportBatch{Lines: []tokenvault.ImportLine{{Number: 1, ID: "old_1", Type: "token", Data: "new value"}}})
	if err != nil || res.Imported != 1 {
		t.Fatalf("ImportTokens(id of an expired token) = %+v, %v; want 1 imported", res, err)
	}
	if got, err := e.V.GetToken(ctx, key, "old_1"); err != nil || got.Data != "new value" {
		t.Errorf("GetToken(old_1) = %+v, %v; want the imported token", got, err)
	}
}

// TestImportNeedsTokenImport: a key with token:create only, a public key,
// and a management key may not import; token:import is held directly only.
func TestImportNeedsTokenImport(t *testing.T) {
	e := vaulttest.NewEnv(t)
	batch := tokenvault.ImportBatch{Lines: []tokenvault.ImportLine{cardLine(1, "p01")}}
	creator := e.App(t, tokenvault.Private, "token:create")
	_, err := e.V.ImportTokens(ctx, creator.Key, batch)
	vaulttest.WantKind(t, "ImportTokens(token:create only)", err, tokenvault.PermissionDenied)
	_, err = e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "pub", Type: tokenvault.Public,
		Permissions: []string{"token:import"}})
	vaulttest.WantKind(t, "CreateApplication(public, token:import)", err, tokenvault.Invalid)
	_, err = e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "rule", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:import"}}}})
	vaulttest.WantKind(t, "CreateApplication(rule granting token:import)", err, tokenvault.Invalid)
	// token:import without token:create where the token goes: the line is
	// rejected.
	narrow := e.App(t, tokenvault.Private, "token:import")
	res, err := e.V.ImportTokens(ctx, narrow.Key, batch)
	if err != nil || res.Rejected != 1 || res.Imported != 0 {
		t.Fatalf("ImportTokens(no token:create) = %+v, %v; want 1 rejected", res, err)
	}
	// A session, even authorized with token:import by a key that holds
	// it, may not import.
	sess := e.Session(t)
	if err := e.V.AuthorizeSession(ctx, importer(t, e), tokenvault.AuthorizeSessionRequest{Nonce: sess.Nonce,
		Permissions: []string{"token:import", "token:create"}}); err != nil {
		t.Fatalf("AuthorizeSession(token:import) = %v", err)
	}
	_, err = e.V.ImportTokens(ctx, sess.SessionKey, batch)
	vaulttest.WantKind(t, "ImportTokens(session)", err, tokenvault.PermissionDenied)
	many := make([]tokenvault.ImportLine, tokenvault.MaxImportBatch+1)
	_, err = e.V.ImportTokens(ctx, importer(t, e), tokenvault.ImportBatch{Lines: many})
	vaulttest.WantKind(t, "ImportTokens(1001 lines)", err, tokenvault.Invalid)
}

// TestImportBatchIsWholeOrNothing fails each write of a batch in turn: the
// store is then exactly as before, nothing of the batch created.
func TestImportBatchIsWholeOrNothing(t *testing.T) {
	fs := storetest.NewFaultStore(memory.New())
	e := vaulttest.NewEnvOn(t, fs)
	key := importer(t, e)
	var lines []tokenvault.ImportLine
	for i := range 5 {
		lines = append(lines, cardLine(int64(i+1), "w0"+string(rune('a'+i))))
	}
	for n := 0; ; n++ {
		e.SettleChain(t)
		before := vaulttest.Dump(t, fs)
		fs.FailAfter(n)
		res, err := e.V.ImportTokens(ctx, key, tokenvault.ImportBatch{Lines: lines})
		fs.FailAfter(-1)
		if err == nil {
			if n == 0 || res.Imported != len(lines) {
				t.Fatalf("ImportTokens with write %d failing = %+v", n, res)
			}
			return
		}
		vaulttest.WantKind(t, "ImportTokens", err, tokenvault.Internal)
		if diff := cmp.Diff(before, vaulttest.Dump(t, fs)); diff != "" {
			t.Fatalf("ImportTokens with write %d failing changed the store:\n%s", n, diff)
		}
		if n > 200 {
			t.Fatal("ImportTokens never succeeded")
		}
	}
}
