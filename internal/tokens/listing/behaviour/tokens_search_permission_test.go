package listing_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestSearchChecksPermissionFirst: a key without token:search gets
// PermissionDenied for any query, valid or not; how its query would be
// read is for keys that may search.
func TestSearchChecksPermissionFirst(t *testing.T) {
	e := vaulttest.NewEnv(t)
	reader := e.App(t, tokenvault.Private, "token:read")
	searcher := e.App(t, tokenvault.Private, "token:search")
	for _, q := range []string{"nonsense", "colour:red", "data:x AND", "data:x"} {
		_, err := e.V.SearchTokens(ctx, reader.Key, tokenvault.SearchTokensRequest{Query: q})
		vaulttest.WantKind(t, "SearchTokens("+q+") without token:search", err, tokenvault.PermissionDenied)
	}
	_, err := e.V.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: "colour:red"})
	vaulttest.WantKind(t, "SearchTokens(colour:red) with token:search", err, tokenvault.Invalid)
}

// TestSearchAloneSeesWhatListSees: a key with token:search and no
// token:read finds a token by what it knows (a search index value) and sees
// its identity, placement and data as its transform shows it (the mask),
// never its metadata, search indexes, fingerprint, mask field or
// expressions; and a metadata term gets the answer GET /tokens?metadata.k=v
// gives the same key: PermissionDenied. A key that also reads gets the
// same tokens by either route.
func TestSearchAloneSeesWhatListSees(t *testing.T) {
	e := vaulttest.NewEnv(t)
	tok := e.Token(t, tokenvault.TokenRequest{Type: "card", Metadata: map[string]string{"m": "v"},
		SearchIndexes: []string{"{{ data.number }}"},
		Data:          map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}})
	searcher := e.App(t, tokenvault.Private, "token:search")

	_, err := e.V.ListTokens(ctx, searcher.Key, tokenvault.ListTokensRequest{Metadata: map[string]string{"m": "v"}})
	vaulttest.WantKind(t, "ListTokens(metadata.m=v) by search alone", err, tokenvault.PermissionDenied)
	_, err = e.V.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: "metadata.m:v"})
	vaulttest.WantKind(t, "SearchTokens(metadata.m:v) by search alone", err, tokenvault.PermissionDenied)

	page, err := e.V.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: "data:4242424242424242"})
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("SearchTokens(data:...) by search alone = %+v, %v; want the card", page, err)
	}
	got := page.Data[0]
	if got.ID != tok.ID || got.Type != "card" || len(got.Containers) == 0 {
		t.Errorf("search alone: %+v, want the card's id, type and containers", got)
	}
	if got.Metadata != nil || got.SearchIndexes != nil || got.Fingerprint != "" || got.FingerprintExpression != "" || got.Mask != nil {
		t.Errorf("search alone sees what is stored with the token: metadata %v, search indexes %v, fingerprint %q, expression %q, mask %v",
			got.Metadata, got.SearchIndexes, got.Fingerprint, got.FingerprintExpression, got.Mask)
	}
	if data, _ := got.Data.(map[string]any); data == nil || data["number"] == "4242424242424242" {
		t.Errorf("search alone: data %v, want the mask", got.Data)
	}

	both := e.Reader(t, "mask", "token:search", "token:read")
	listed, err := e.V.ListTokens(ctx, both.Key, tokenvault.ListTokensRequest{Metadata: map[string]string{"m": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	found, err := e.V.SearchTokens(ctx, both.Key, tokenvault.SearchTokensRequest{Query: "metadata.m:v"})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Data) != 1 || len(found.Data) != 1 || found.Data[0].Metadata["m"] != "v" || listed.Data[0].Metadata["m"] != "v" {
		t.Errorf("a reader: listed %+v, found %+v; want the token with its metadata from both", listed.Data, found.Data)
	}
}
