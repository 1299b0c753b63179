package listing_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestListAndSearchAreAudited: listing or searching tokens logs a read of
// every token whose data the answer carries, as GetToken does; a
// redacted answer logs nothing of the token.
func TestListAndSearchAreAudited(t *testing.T) {
	e := vaulttest.NewEnv(t)
	tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "secret", Metadata: map[string]string{"k": "v"}})
	reads := func() int {
		t.Helper()
		logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "token", EntityID: tok.ID})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range logs.Data {
			if l.Operation == tokenvault.OpRead {
				n++
			}
		}
		return n
	}
	revealer := e.Reader(t, "reveal", "token:read", "token:search")
	if _, err := e.V.ListTokens(ctx, revealer.Key, tokenvault.ListTokensRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.SearchTokens(ctx, revealer.Key, tokenvault.SearchTokensRequest{Query: "metadata.k:v"}); err != nil {
		t.Fatal(err)
	}
	if got := reads(); got != 2 {
		t.Errorf("reads logged after a list and a search = %d, want 2", got)
	}
	redactor := e.Reader(t, "redact", "token:read")
	if _, err := e.V.ListTokens(ctx, redactor.Key, tokenvault.ListTokensRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := reads(); got != 2 {
		t.Errorf("reads logged after a redacted list = %d, want still 2", got)
	}
}
