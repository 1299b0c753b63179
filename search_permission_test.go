package tokenvault_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestSearchChecksPermissionFirst: a key without token:search gets
// PermissionDenied for any query, valid or not; how its query would be
// read is for keys that may search.
func TestSearchChecksPermissionFirst(t *testing.T) {
	e := newEnv(t)
	reader := e.app(t, tokenvault.Private, "token:read")
	searcher := e.app(t, tokenvault.Private, "token:search")
	for _, q := range []string{"nonsense", "colour:red", "data:x AND", "data:x"} {
		_, err := e.v.SearchTokens(ctx, reader.Key, tokenvault.SearchTokensRequest{Query: q})
		wantKind(t, "SearchTokens("+q+") without token:search", err, tokenvault.PermissionDenied)
	}
	_, err := e.v.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: "colour:red"})
	wantKind(t, "SearchTokens(colour:red) with token:search", err, tokenvault.Invalid)
}
