package auditlog_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// ownTxWatch is a store that tells, of the Updates that write a chain
// sequence entry (the linker's), those made with store.WithOwnTransaction
// from the others.
type ownTxWatch struct {
	store.Store
	own, shared atomic.Int64
	// linkGets counts the reads (Get) of the linking transactions, and
	// linked the sequence entries they put.
	linkGets, linked atomic.Int64
}

func (s *ownTxWatch) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error {
		w := &seqWrites{Tx: tx}
		err := fn(w)
		if err == nil && w.seq {
			s.linkGets.Add(w.gets)
			s.linked.Add(w.seqs)
			if store.OwnTransaction(ctx) {
				s.own.Add(1)
			} else {
				s.shared.Add(1)
			}
		}
		return err
	})
}

// seqWrites notes whether a transaction put a chain sequence entry, how
// many, and how many reads (Get) it made.
type seqWrites struct {
	store.Tx
	seq        bool
	seqs, gets int64
}

func (t *seqWrites) Put(key, value []byte) error {
	if strings.Contains(string(key), "/idx/chain-seq/") {
		t.seq = true
		t.seqs++
	}
	return t.Tx.Put(key, value)
}

func (t *seqWrites) Get(key []byte) ([]byte, error) {
	t.gets++
	return t.Tx.Get(key)
}

// TestLinkerRunsInItsOwnTransaction: the linker's batches are made with
// store.WithOwnTransaction, so that on a store with a group commit
// (PostgreSQL) their reads, one a line, never hold up the calls queued
// behind them in a shared transaction.
func TestLinkerRunsInItsOwnTransaction(t *testing.T) {
	s := &ownTxWatch{Store: memory.New()}
	e := vaulttest.NewEnvOn(t, s)
	app := e.App(t, tokenvault.Private, "token:create")
	for i := range 5 {
		if _, err := e.V.Tokenize(ctx, app.Key, []any{"value", i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := vaulttest.LinkNow(ctx, e.V); err != nil {
		t.Fatal(err)
	}
	if s.own.Load() == 0 || s.shared.Load() != 0 {
		t.Errorf("linking transactions: %d in their own transaction, %d in a shared one; want some and none",
			s.own.Load(), s.shared.Load())
	}
}

// TestLinkerReadsAhead: a linking transaction reads its batch's lines and
// link records with a scan a tenant, not a read a line (on PostgreSQL a
// round trip each, which would leave the linker behind the calls).
func TestLinkerReadsAhead(t *testing.T) {
	s := &ownTxWatch{Store: memory.New()}
	e := vaulttest.NewEnvOn(t, s)
	app := e.App(t, tokenvault.Private, "token:create")
	body := make([]any, 200)
	for i := range body {
		body[i] = i
	}
	if _, err := e.V.Tokenize(ctx, app.Key, body); err != nil {
		t.Fatal(err)
	}
	if err := vaulttest.LinkNow(ctx, e.V); err != nil {
		t.Fatal(err)
	}
	if n, gets := s.linked.Load(), s.linkGets.Load(); n < 200 || gets > 20 {
		t.Errorf("linking %d lines made %d reads; want at least 200 lines and a few reads, not one a line", n, gets)
	}
}
