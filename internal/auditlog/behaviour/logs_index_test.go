package auditlog_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
)

// entityLogs lists the operations of the logs about token id, newest
// first, through an entity query and through a type query.
func entityLogs(t *testing.T, e *vaulttest.Env, id string, window ...*time.Time) (byEntity, byType []string) {
	t.Helper()
	req := tokenvault.ListLogsRequest{EntityType: "token", EntityID: id}
	if len(window) == 2 {
		req.StartDate, req.EndDate = window[0], window[1]
	}
	req.PageRequest.Size = 100
	page, err := e.V.ListLogs(ctx, e.Mgmt, req)
	if err != nil {
		t.Fatalf("ListLogs(entity): %v", err)
	}
	for _, l := range page.Data {
		byEntity = append(byEntity, l.Operation)
	}
	req.EntityID = ""
	page, err = e.V.ListLogs(ctx, e.Mgmt, req)
	if err != nil {
		t.Fatalf("ListLogs(type): %v", err)
	}
	for _, l := range page.Data {
		if l.EntityID == id {
			byType = append(byType, l.Operation)
		}
	}
	return byEntity, byType
}

// checkIndexed fails unless every line of e's tenant without an index
// entry has a pending one, and returns how many are pending.
func checkIndexed(t *testing.T, e *vaulttest.Env) int {
	t.Helper()
	missing, pending, err := vaulttest.UnindexedLines(ctx, e.V, e.Boot.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(missing, pending) {
		t.Fatalf("lines without an index entry %v, lines with a pending one %v: want the same", missing, pending)
	}
	return len(pending)
}

// TestLogIndexAnswersEntityQueries: the lines of reads and writes are found
// by entity and type queries before the indexer has written their index
// entries, after, and half and half, without duplicates, and the indexer
// leaves no line behind its marker unindexed.
func TestLogIndexAnswersEntityQueries(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		reader := e.Reader(t, "reveal", "token:create", "token:read")
		tok, err := e.V.CreateToken(ctx, reader.Key, tokenvault.TokenRequest{Type: "token", Data: "secret"})
		if err != nil {
			t.Fatal(err)
		}
		read := func(n int) {
			for range n {
				if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		check := func(stage string, want ...string) {
			t.Helper()
			byEntity, byType := entityLogs(t, e, tok.ID)
			vaulttest.WantOps(t, stage+", by entity", byEntity, want...)
			vaulttest.WantOps(t, stage+", by type", byType, want...)
		}
		e.Clock.Advance(time.Millisecond)
		read(2)
		check("reads pending", "read", "read", "create")
		// Only a store one process holds leaves lines to the indexer,
		// unless it appends (it then indexes a read with its line).
		_, single := e.Store.(store.SingleProcess)
		if _, appends := e.Store.(store.Appender); appends {
			single = false
		}
		if n := checkIndexed(t, e); single && n != 2 {
			t.Fatalf("%d pending entries, want the 2 reads'", n)
		} else if !single && n != 0 {
			t.Fatalf("on a shared or appending store, %d entries pending", n)
		}

		// Lines younger than the horizon wait. (The Vault's own indexer
		// runs too, under the same clock.)
		if n, err := vaulttest.IndexPending(ctx, e.V); err != nil || n != 0 {
			t.Fatalf("IndexPending before the horizon = %d, %v; want 0", n, err)
		}
		e.Clock.Advance(vaulttest.LogIndexHorizon + time.Millisecond)
		if _, err := vaulttest.IndexPending(ctx, e.V); err != nil {
			t.Fatal(err)
		}
		if n := checkIndexed(t, e); n != 0 {
			t.Fatalf("after indexing past the horizon: %d entries pending", n)
		}
		check("all indexed", "read", "read", "create")
		read(1)
		check("half and half", "read", "read", "read", "create")

		// A date window applies to pending lines too.
		now := e.Clock.Now()
		later := now.Add(time.Hour)
		byEntity, _ := entityLogs(t, e, tok.ID, &now, &later)
		vaulttest.WantOps(t, "window on pending lines", byEntity, "read")

		if n := checkIndexed(t, e); single && n != 1 {
			t.Fatalf("%d entries pending, want the last read's only", n)
		} else if !single && n != 0 {
			t.Fatalf("%d entries pending, want none", n)
		}
	})
}

// TestLogIndexClockBackwards: a read stamped before lines already indexed
// (the clock went back) is found, pending and then indexed.
func TestLogIndexClockBackwards(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		reader := e.Reader(t, "reveal", "token:create", "token:read")
		tok, err := e.V.CreateToken(ctx, reader.Key, tokenvault.TokenRequest{Type: "token", Data: "secret"})
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Millisecond)
		if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Second)
		if _, err := vaulttest.IndexPending(ctx, e.V); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(-time.Hour)
		if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
			t.Fatal(err)
		}
		for _, stage := range []string{"pending", "indexed"} {
			byEntity, byType := entityLogs(t, e, tok.ID)
			// Newest first by key, and the last read's key is an hour earlier.
			vaulttest.WantOps(t, stage+", by entity", byEntity, "read", "create", "read")
			vaulttest.WantOps(t, stage+", by type", byType, "read", "create", "read")
			checkIndexed(t, e)
			e.Clock.Advance(time.Second)
			if _, err := vaulttest.IndexPending(ctx, e.V); err != nil {
				t.Fatal(err)
			}
		}
		if n := checkIndexed(t, e); n != 0 {
			t.Fatalf("%d entries still pending", n)
		}
	})
}

// TestLogIndexSurvivesReopen: lines left to the indexer by a Vault that
// closed are found by the next one, whose indexer takes them.
func TestLogIndexSurvivesReopen(t *testing.T) {
	s := vaulttest.StoreKinds[1].Open(t) // bolt
	e := vaulttest.NewEnvOn(t, s)
	reader := e.Reader(t, "reveal", "token:create", "token:read")
	tok, err := e.V.CreateToken(ctx, reader.Key, tokenvault.TokenRequest{Type: "token", Data: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.V.Close(); err != nil {
		t.Fatal(err)
	}
	v2, err := tokenvault.Open(ctx, tokenvault.Options{
		Store: s,
		Now: func() time.Time {
			return e.Clock.Now().Add(time.Second) // past the horizon: the indexer takes the lines
		},
		Keys:      tokenvault.KeyOptions{MasterKey: e.Key},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	e.V = v2
	byEntity, byType := entityLogs(t, e, tok.ID)
	vaulttest.WantOps(t, "after reopening, by entity", byEntity, "read", "create")
	vaulttest.WantOps(t, "after reopening, by type", byType, "read", "create")
	deadline := time.Now().Add(20 * time.Second)
	for checkIndexed(t, e) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reopened Vault's indexer left entries pending")
		}
		time.Sleep(50 * time.Millisecond)
	}
	byEntity, _ = entityLogs(t, e, tok.ID)
	vaulttest.WantOps(t, "indexed after reopening", byEntity, "read", "create")
}

// TestLogIndexConcurrentIndexing reads a token from several goroutines while
// the indexer runs, and then finds every line, each once.
func TestLogIndexConcurrentIndexing(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		reader := e.Reader(t, "reveal", "token:create", "token:read")
		tok, err := e.V.CreateToken(ctx, reader.Key, tokenvault.TokenRequest{Type: "token", Data: "secret"})
		if err != nil {
			t.Fatal(err)
		}
		const workers, reads = 4, 20
		var wg sync.WaitGroup
		stop := make(chan struct{})
		indexed := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					indexed <- nil
					return
				default:
				}
				e.Clock.Advance(vaulttest.LogIndexHorizon)
				if _, err := vaulttest.IndexPending(context.Background(), e.V); err != nil {
					indexed <- err
					return
				}
			}
		}()
		for range workers {
			wg.Go(func() {
				for range reads {
					if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		if err := <-indexed; err != nil {
			t.Fatal(err)
		}
		byEntity, byType := entityLogs(t, e, tok.ID)
		if len(byEntity) != 1+workers*reads || len(byType) != 1+workers*reads {
			t.Fatalf("%d lines by entity and %d by type, want %d", len(byEntity), len(byType), 1+workers*reads)
		}
		checkIndexed(t, e)
		e.Clock.Advance(time.Second)
		if _, err := vaulttest.IndexPending(ctx, e.V); err != nil {
			t.Fatal(err)
		}
		if n := checkIndexed(t, e); n != 0 {
			t.Fatalf("%d entries pending after a last pass", n)
		}
	})
}
