package events_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// openTokenEventVault is a Vault on memory with a tenant, a private
// application that creates and reads tokens, a webhook subscribed to
// every event type by name, and an event tap.
func openTokenEventVault(t *testing.T) (*vaulttest.Env, *vaulttest.EventTap, *tokenvault.Application) {
	t.Helper()
	e := vaulttest.NewEnv(t)
	tap := vaulttest.TapEvents(e.V)
	var all []string
	for _, et := range events.Types() {
		all = append(all, et.Name)
	}
	if _, _, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, all, true); err != nil {
		t.Fatal(err)
	}
	app, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "a", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
			Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}}}})
	if err != nil {
		t.Fatal(err)
	}
	return e, tap, app
}

// TestTokenViewKeptSmall: a token whose metadata and search indexes reach
// their limits (50 entries of 600 bytes, 20 expressions of 4 kB) gets an
// event under events.MaxEventBytes, its search indexes, fingerprint expression
// and metadata dropped in that order and named in "omitted"; a small
// token's view omits nothing.
func TestTokenViewKeptSmall(t *testing.T) {
	e, tap, app := openTokenEventVault(t)
	md := map[string]string{}
	for i := range tokens.MaxMetadataEntries {
		md[fmt.Sprintf("%03d%s", i, strings.Repeat("k", tokens.MaxMetadataKey-3))] = strings.Repeat("v", tokens.MaxMetadataValue)
	}
	var indexes []string
	for i := range tokens.MaxSearchIndexes {
		indexes = append(indexes, fmt.Sprintf("{{ data | slice: 0, %d }}%s", i+1, strings.Repeat(" ", 4000)))
	}
	big, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: "d", Metadata: md, SearchIndexes: indexes})
	if err != nil {
		t.Fatal(err)
	}
	small, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: "d", Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ev := range tap.Events() {
		if ev.Info.Type != tokenvault.EventTokenCreated {
			continue
		}
		if len(ev.JSON) > events.MaxEventBytes {
			t.Errorf("an event of %d bytes", len(ev.JSON))
		}
		var data struct{ Token tokens.Event }
		if err := json.Unmarshal(ev.Info.Data, &data); err != nil {
			t.Fatal(err)
		}
		switch data.Token.ID {
		case big.ID:
			seen++
			if strings.Join(data.Token.Omitted, ",") != "search_indexes,fingerprint_expression,metadata" || data.Token.Metadata != nil || data.Token.SearchIndexes != nil {
				t.Errorf("the big token's view omitted %v (metadata %d entries)", data.Token.Omitted, len(data.Token.Metadata))
			}
		case small.ID:
			seen++
			if data.Token.Omitted != nil || data.Token.Metadata["k"] != "v" {
				t.Errorf("the small token's view = %+v", data.Token)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d token.created events of the two tokens", seen)
	}
}
