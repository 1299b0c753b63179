package tokenvault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/store/memory"
)

// openEventVault is a Vault on memory with a tenant, a private
// application that creates and reads tokens, a webhook subscribed to
// every event type by name, and an event tap.
func openEventVault(t *testing.T) (*Vault, *EventTap, *TenantBootstrap, *Application) {
	t.Helper()
	ctx := context.Background()
	v, err := Open(ctx, Options{Store: memory.New(), Keys: KeyOptions{MasterKey: bytes.Repeat([]byte{9}, 32)},
		Retention: RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	tap := TapEvents(v)
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, et := range events.Types() {
		all = append(all, et.Name)
	}
	if _, _, err := PutTestWebhook(ctx, v, boot.Tenant.ID, all, true); err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, CreateApplicationRequest{Name: "a", Type: Private,
		Rules: []AccessRule{{Priority: 1, Container: "/", Transform: TransformReveal, Permissions: []string{PermTokenCreate, PermTokenRead}}}})
	if err != nil {
		t.Fatal(err)
	}
	return v, tap, boot, app
}

// TestTokenViewKeptSmall: a token whose metadata and search indexes reach
// their limits (50 entries of 600 bytes, 20 expressions of 4 kB) gets an
// event under events.MaxEventBytes, its search indexes, fingerprint expression
// and metadata dropped in that order and named in "omitted"; a small
// token's view omits nothing.
func TestTokenViewKeptSmall(t *testing.T) {
	v, tap, _, app := openEventVault(t)
	ctx := context.Background()
	md := map[string]string{}
	for i := range tokens.MaxMetadataEntries {
		md[fmt.Sprintf("%03d%s", i, strings.Repeat("k", tokens.MaxMetadataKey-3))] = strings.Repeat("v", tokens.MaxMetadataValue)
	}
	var indexes []string
	for i := range tokens.MaxSearchIndexes {
		indexes = append(indexes, fmt.Sprintf("{{ data | slice: 0, %d }}%s", i+1, strings.Repeat(" ", 4000)))
	}
	big, err := v.CreateToken(ctx, app.Key, TokenRequest{Type: TypeToken, Data: "d", Metadata: md, SearchIndexes: indexes})
	if err != nil {
		t.Fatal(err)
	}
	small, err := v.CreateToken(ctx, app.Key, TokenRequest{Type: TypeToken, Data: "d", Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ev := range tap.Events() {
		if ev.Info.Type != EventTokenCreated {
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
