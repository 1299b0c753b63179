package auditlog_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// writeRecorder is a store that records, for each Update that commits,
// the keys its transaction wrote and deleted.
type writeRecorder struct {
	store.Store
	mu  sync.Mutex
	txs []recordedTx
}

type recordedTx struct{ puts, deletes []string }

func (s *writeRecorder) Update(ctx context.Context, fn func(store.Tx) error) error {
	var rec *recordedTx
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		rec = &recordedTx{} // a retried run starts again
		return fn(recordingTx{tx, rec})
	})
	if err == nil && rec != nil {
		s.mu.Lock()
		s.txs = append(s.txs, *rec)
		s.mu.Unlock()
	}
	return err
}

func (s *writeRecorder) recorded() []recordedTx {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recordedTx(nil), s.txs...)
}

type recordingTx struct {
	store.Tx
	rec *recordedTx
}

func (t recordingTx) Put(key, value []byte) error {
	t.rec.puts = append(t.rec.puts, string(key))
	return t.Tx.Put(key, value)
}

func (t recordingTx) Delete(key []byte) error {
	t.rec.deletes = append(t.rec.deletes, string(key))
	return t.Tx.Delete(key)
}

// TestLinkerWritesNoLine: a line is written once, by its commit. The
// transactions that link lines (those that take entries off the chain
// queue) write each line's link record and sequence index entry, and no
// key of the log; and the chain they write verifies whole.
func TestLinkerWritesNoLine(t *testing.T) {
	ctx := context.Background()
	s := &writeRecorder{Store: memory.New()}
	v := openPlain(t, s)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	for i := range 5 {
		if _, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "app" + string(rune('a'+i)), Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenRead}}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := v.VerifyAuditChain(ctx, tid) // links what is queued
	if err != nil {
		t.Fatal(err)
	}
	if r.Lines < 6 || r.Unlinked != 0 {
		t.Fatalf("%d lines verified, %d unlinked; want at least 6 and 0", r.Lines, r.Unlinked)
	}
	for _, p := range r.Problems {
		if p.Kind != "unsigned_tail" {
			t.Errorf("problem: %v", p)
		}
	}
	logs := barrier.Tenant(tid).Logs().String()
	links := barrier.Tenant(tid).ChainLink("").String()
	// count walks what the recorder holds. The background linker may
	// have linked some lines and VerifyAuditChain seen them linked before
	// the recorder appended that transaction (it records once the store's
	// Update has returned): polled until every line's link is recorded.
	count := func() (linked, linking int) {
		for _, tx := range s.recorded() {
			dequeued := 0
			for _, k := range tx.deletes {
				if strings.HasPrefix(k, barrier.ChainQueue.String()) {
					dequeued++
				}
			}
			if dequeued == 0 {
				continue
			}
			linking++
			for _, k := range tx.puts {
				switch {
				case strings.HasPrefix(k, logs):
					t.Errorf("a linking transaction wrote the line %s", k)
				case strings.HasPrefix(k, links):
					linked++
				}
			}
		}
		return linked, linking
	}
	linked, linking := count()
	for deadline := time.Now().Add(10 * time.Second); linked < r.Lines && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		linked, linking = count()
	}
	if linking == 0 || linked != r.Lines {
		t.Fatalf("%d linking transactions wrote %d link records; want some, and one for each of the %d lines", linking, linked, r.Lines)
	}
}

// openPlain opens a Vault on s with the real clock, no sweeper and no
// tenant: what a test counts of the store is its own tenant's.
func openPlain(t *testing.T, s store.Store) *tokenvault.Vault {
	t.Helper()
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: bytes.Repeat([]byte{7}, 32)},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}, AuditExport: tokenvault.AuditExportOptions{Backoff: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}
