package auditlog_test

import (
	"context"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

func TestLogRetentionPrunesOldLinesInBatches(t *testing.T) {
	const retention = 400 * 24 * time.Hour
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			e := vaulttest.NewEnvOn(t, sk.Open(t), func(o *tokenvault.Options) { o.Retention.Logs = retention })
			ctx := context.Background()
			app := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
			// More old lines than one sweep transaction removes.
			for range 130 {
				if _, err := e.V.Tokenize(ctx, app.Key, map[string]any{"v": "old"}); err != nil {
					t.Fatal(err)
				}
			}
			old := vaulttest.AllLogs(t, e.V, e.Mgmt)
			e.Clock.Advance(200 * 24 * time.Hour)
			tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "new"})
			if err != nil {
				t.Fatal(err)
			}
			e.Clock.Advance(201 * 24 * time.Hour) // the first lines are 401 days old

			n, err := e.V.Sweep(ctx)
			if err != nil {
				t.Fatalf("Sweep: %v", err)
			}
			if n != len(old) {
				t.Errorf("Sweep = %d, want the %d lines older than the retention", n, len(old))
			}
			left, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if left.Pagination.TotalItems != 1 || left.Data[0].EntityID != tok.ID {
				t.Errorf("logs after the sweep = %+v, want the one line of %s", left.Data, tok.ID)
			}
			// The lines are gone for a type's page (which walks the log)
			// and, with their index entries, for an entity's (which reads
			// the entity index, idx/log-e, under which a type's entries
			// lie too).
			byType, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityToken})
			if err != nil {
				t.Fatal(err)
			}
			if byType.Pagination.TotalItems != 1 {
				t.Errorf("logs of entity type token after the sweep: %d, want 1", byType.Pagination.TotalItems)
			}
			byEntity, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityApplication, EntityID: app.ID})
			if err != nil {
				t.Fatal(err)
			}
			if byEntity.Pagination.TotalItems != 0 {
				t.Errorf("the application's creation line outlived the retention: %+v", byEntity.Data)
			}
		})
	}
}

func TestLogsAreKeptForeverWithoutRetention(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	before, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(50 * 365 * 24 * time.Hour)
	if _, err := e.V.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Pagination.TotalItems != before.Pagination.TotalItems || before.Pagination.TotalItems == 0 {
		t.Errorf("lines: %d before a sweep 50 years on, %d after; want all kept", before.Pagination.TotalItems, after.Pagination.TotalItems)
	}
}

func TestNegativeLogRetentionIsRefused(t *testing.T) {
	_, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()}, Retention: tokenvault.RetentionOptions{Logs: -time.Hour}})
	if err == nil {
		t.Fatal("Open with a negative LogRetention succeeded")
	}
}
