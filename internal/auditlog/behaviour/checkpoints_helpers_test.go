package auditlog_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/syncbuf"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// openChecked opens a Vault on s with a clock the test moves (nil: the
// real one) and chain options ac, logging to log when not nil, exporting
// to sinks.
func openChecked(t *testing.T, s store.Store, clock *testfake.Clock, ac tokenvault.AuditChainOptions, log *syncbuf.Buffer, sinks ...tokenvault.AuditSink) *tokenvault.Vault {
	t.Helper()
	opts := tokenvault.Options{Store: s, Keys: tokenvault.KeyOptions{MasterKey: bytes.Repeat([]byte{7}, 32)},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}, AuditChain: ac,
		AuditExport: tokenvault.AuditExportOptions{Sinks: sinks, Backoff: time.Hour}}
	if clock != nil {
		opts.Now = clock.Now
	}
	if log != nil {
		opts.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	v, err := tokenvault.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// openBoltStore opens a bbolt store in the test's directory, closed with
// the test.
func openBoltStore(t *testing.T) store.Store {
	t.Helper()
	s, err := bolt.Open(filepath.Join(t.TempDir(), "v.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// linkForTest links the queued lines (auditlog.Linker), as the linker
// does beside the commits: what the helpers below read is what the chain
// holds once linked.
func linkForTest(t *testing.T, v *tokenvault.Vault) {
	t.Helper()
	if err := vaulttest.LinkNow(context.Background(), v); err != nil {
		t.Fatal(err)
	}
}

// storedCheckpoints reads every checkpoint record of tenant tid, in seq
// order, once the queued lines are linked.
func storedCheckpoints(t *testing.T, v *tokenvault.Vault, tid string) []auditchain.Checkpoint {
	t.Helper()
	linkForTest(t, v)
	_, all, err := vaulttest.ChainAnchor(context.Background(), v, tid)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// lineHash is the hash of tenant tid's line seq, as its record's link has
// it.
func lineHash(t *testing.T, v *tokenvault.Vault, tid string, seq uint64) auditchain.Hash {
	t.Helper()
	linkForTest(t, v)
	var h auditchain.Hash
	err := testseam.Of(v).Work.View(context.Background(), func(tx *unit.Tx) error {
		var suffix string
		if err := tx.Scan(barrier.Tenant(tid).ChainSeqs().Sub(barrier.SeqKey(seq)+"/"), "", 1, func(_ barrier.Key, rest string) error {
			suffix = rest
			return nil
		}); err != nil {
			return err
		}
		var rec auditlog.LineRecord
		ok, err := tx.GetRecord(barrier.Tenant(tid).Logs().Key(suffix), &rec)
		if err == nil && ok {
			err = auditlog.WithLink(tx, tid, suffix, &rec)
		}
		if err != nil || !ok || rec.Link == nil {
			t.Fatalf("line %d (%q): found %v, %v, link %v", seq, suffix, ok, err, rec.Link)
		}
		h = rec.Link.Hash
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// headOf reads tenant tid's chain head (once linked).
func headOf(t *testing.T, v *tokenvault.Vault, tid string) auditlog.Head {
	t.Helper()
	linkForTest(t, v)
	var h auditlog.Head
	if err := testseam.Of(v).Work.View(context.Background(), func(tx *unit.Tx) error {
		_, err := tx.GetRecord(barrier.Tenant(tid).ChainHead(), &h)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

// unsignedMarks lists the unsigned marks of the store.
func unsignedMarks(t *testing.T, v *tokenvault.Vault) []string {
	t.Helper()
	linkForTest(t, v)
	var out []string
	if err := testseam.Of(v).Work.View(context.Background(), func(tx *unit.Tx) error {
		out = out[:0]
		return tx.ScanKeys(barrier.UnsignedChains, func(_ barrier.Key, rest string) error {
			out = append(out, rest)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// verifyAll checks each checkpoint's signature with its published key,
// and its hash against the line it covers.
func verifyAll(t *testing.T, v *tokenvault.Vault, tid string, cps []auditchain.Checkpoint) {
	t.Helper()
	keys, err := v.AuditKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cps {
		var pub []byte
		for _, k := range keys {
			if k.ID == c.KeyID {
				pub = k.Key
			}
		}
		if err := c.VerifySignature(pub); err != nil {
			t.Errorf("checkpoint %d: %v", c.Seq, err)
		}
		if c.Seq > 0 && c.Hash != lineHash(t, v, tid, c.Seq) {
			t.Errorf("checkpoint %d: hash %s is not the line's", c.Seq, c.Hash)
		}
	}
}
