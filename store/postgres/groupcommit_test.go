package postgres

import (
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestGroupCommitIsolatesFailures sends Updates through the shared path
// (even one alone) at once, where some fail without sending their writes,
// some fail after sending them (a savepoint undoes them), some panic, some
// fail in a way no savepoint contains (a key the index refuses, sent with
// COMMIT) and some ignore a failed statement. Each of those fails only its
// own caller, with its own error or panic, and writes nothing; every other
// Update commits.
//
// A refused key sent with COMMIT (or with another function's read) makes
// every function of its batch run again alone, so the first subtest
// leaves it out to exercise the savepoints.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	t.Run("contained", func(t *testing.T) { testGroupCommitIsolatesFailures(t, false) })
	t.Run("uncontained", func(t *testing.T) { testGroupCommitIsolatesFailures(t, true) })
}

func testGroupCommitIsolatesFailures(t *testing.T, uncontained bool) {
	s := openFresh(t)
	errOwn := errors.New("this update fails")
	huge := make([]byte, 10000) // beyond the btree entry limit
	rand.Read(huge)

	const n = 300
	type outcome struct {
		err      error
		panicked any
	}
	outcomes := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					outcomes[i].panicked = p
				}
			}()
			outcomes[i].err = s.updateShared(t.Context(), func(tx store.Tx) error {
				key := fmt.Appendf(nil, "k/%03d", i)
				if err := tx.Put(key, []byte("v")); err != nil {
					return err
				}
				switch i % 10 {
				case 1:
					return errOwn
				case 2:
					if _, err := tx.Get(key); err != nil { // sends the write
						return err
					}
					return errOwn
				case 3:
					panic(fmt.Sprintf("panic %d", i))
				case 4:
					if uncontained {
						return tx.Put(huge, []byte("v"))
					}
				case 5:
					if err := tx.Put(huge, []byte("v")); err != nil {
						return err
					}
					tx.Get(key) // fails; the error is ignored
					return nil
				case 6:
					if v, err := tx.Get(key); err != nil || string(v) != "v" {
						return fmt.Errorf("Get(%s) = %q, %v; want v", key, v, err)
					}
				}
				return nil
			})
		})
	}
	wg.Wait()

	for i := range n {
		o := outcomes[i]
		v := storetest.Get(t, s, fmt.Sprintf("k/%03d", i))
		switch i % 10 {
		case 1, 2:
			if !errors.Is(o.err, errOwn) || v != nil {
				t.Errorf("failing Update %d = %v, stored %q; want %v and nothing", i, o.err, v, errOwn)
			}
		case 3:
			if want := fmt.Sprintf("panic %d", i); o.panicked != want || v != nil {
				t.Errorf("panicking Update %d panicked with %v, stored %q; want %q and nothing", i, o.panicked, v, want)
			}
		case 4, 5:
			if i%10 == 4 && !uncontained {
				if o.err != nil || v == nil {
					t.Errorf("Update %d = %v, stored %q; want nil and a value", i, o.err, v)
				}
			} else if o.err == nil || v != nil {
				t.Errorf("Update %d writing a huge key = %v, stored %q; want an error and nothing", i, o.err, v)
			}
		default:
			if o.err != nil || o.panicked != nil || v == nil {
				t.Errorf("Update %d = %v (panic %v), stored %q; want nil and a value", i, o.err, o.panicked, v)
			}
		}
	}
}

// TestGeneration checks the generation counter: read with BEGIN as of the
// snapshot, advanced only by a commit, reported as advanced in the
// transaction that advanced it (and in others sharing it), never in a View.
func TestGeneration(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	gen := func() uint64 {
		t.Helper()
		var g uint64
		err := s.View(ctx, func(tx store.Tx) error {
			var advanced bool
			var err error
			g, advanced, err = tx.(store.Generation).Generation()
			if advanced {
				t.Errorf("Generation() in a View: advanced = true")
			}
			return err
		})
		if err != nil {
			t.Fatalf("View: %v", err)
		}
		return g
	}
	g0 := gen()

	err := s.View(ctx, func(tx store.Tx) error { return tx.(store.Generation).AdvanceGeneration() })
	if err == nil {
		t.Errorf("AdvanceGeneration in a View = nil, want an error")
	}

	// An Update that only advances (no write) commits the advance.
	err = s.Update(ctx, func(tx store.Tx) error {
		g := tx.(store.Generation)
		if err := g.AdvanceGeneration(); err != nil {
			return err
		}
		if _, advanced, err := g.Generation(); err != nil || !advanced {
			t.Errorf("Generation() after AdvanceGeneration = advanced %v, %v; want true", advanced, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if g := gen(); g != g0+1 {
		t.Errorf("generation after one advance = %d, want %d", g, g0+1)
	}

	// A failed Update advances nothing.
	errOwn := errors.New("fails")
	err = s.Update(ctx, func(tx store.Tx) error {
		tx.(store.Generation).AdvanceGeneration()
		return errOwn
	})
	if !errors.Is(err, errOwn) {
		t.Fatalf("Update = %v, want %v", err, errOwn)
	}
	if g := gen(); g != g0+1 {
		t.Errorf("generation after a failed advance = %d, want %d", g, g0+1)
	}

	// Shared transactions: the successful advances count, failed ones do
	// not.
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := s.updateShared(ctx, func(tx store.Tx) error {
				if err := tx.(store.Generation).AdvanceGeneration(); err != nil {
					return err
				}
				if i%2 == 1 {
					return errOwn
				}
				return tx.Put(fmt.Appendf(nil, "k/%02d", i), nil)
			})
			if want := error(nil); i%2 == 1 {
				if !errors.Is(err, errOwn) {
					t.Errorf("Update %d = %v, want %v", i, err, errOwn)
				}
			} else if err != want {
				t.Errorf("Update %d = %v", i, err)
			}
		})
	}
	wg.Wait()
	if g := gen(); g != g0+1+n/2 {
		t.Errorf("generation after %d shared advances = %d, want %d", n/2, g, g0+1+n/2)
	}
}

// TestMigrateAddsGeneration migrates a schema made by a version without
// the generation table: its data stays, and the table is added at 0.
func TestMigrateAddsGeneration(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	q := pgx.Identifier{schema}.Sanitize()
	for _, stmt := range []string{
		"CREATE SCHEMA " + q,
		"CREATE TABLE " + q + ".kv (key bytea PRIMARY KEY, value bytea NOT NULL)",
		"INSERT INTO " + q + ".kv VALUES ('k', 'v')",
	} {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	s := openSchema(t, dsn, schema, nil) // migrates
	defer s.Close()
	if got := storetest.Get(t, s, "k"); string(got) != "v" {
		t.Errorf("Get(k) after Migrate = %q, want v", got)
	}
	err = s.View(t.Context(), func(tx store.Tx) error {
		gen, _, err := tx.(store.Generation).Generation()
		if err == nil && gen != 0 {
			t.Errorf("Generation() after Migrate = %d, want 0", gen)
		}
		return err
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
}
