package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// dsnEnv names the environment variable holding the test server's DSN.
const dsnEnv = "TOKENVAULT_TEST_POSTGRES_DSN"

// testDSN returns the test server's DSN, or skips the test.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skip("set TOKENVAULT_TEST_POSTGRES_DSN=postgres://... to run the PostgreSQL store tests; .ci/run does this")
	}
	return dsn
}

// freshSchema returns the name of a new, unused schema, dropped (with
// everything in it) when t ends. It does not create it: Migrate does.
func freshSchema(t testing.TB, dsn string) string {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	schema := "tvtest_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: connect: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// openSchema opens a migrated Store on schema. The caller closes it.
func openSchema(t testing.TB, dsn, schema string, opts *Options) *Store {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Schema = schema
	s, err := Open(context.Background(), dsn, &o)
	if err != nil {
		t.Fatalf("Open() = %v", err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		s.Close()
		t.Fatalf("Migrate() = %v", err)
	}
	return s
}

// openFresh opens a Store on a fresh schema, closed when t ends (closing
// twice is harmless) and before the schema is dropped.
func openFresh(t testing.TB) *Store {
	t.Helper()
	dsn := testDSN(t)
	s := openSchema(t, dsn, freshSchema(t, dsn), nil)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	dsn := testDSN(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return openSchema(t, dsn, freshSchema(t, dsn), nil)
	})
}

func TestConformanceFaultStore(t *testing.T) {
	// The wrapper must be transparent while no fault is armed, including
	// on a backend that reruns fns after serialization failures.
	dsn := testDSN(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return storetest.NewFaultStore(openSchema(t, dsn, freshSchema(t, dsn), nil))
	})
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		prefix string
		want   string
		ok     bool
	}{
		{"", "", false},
		{"a", "b", true},
		{"a/", "a0", true},
		{"a\xff", "b", true},
		{"a\xfe\xff\xff", "a\xff", true},
		{"\xff", "", false},
		{"\xff\xff\xff", "", false},
		{"\x00", "\x01", true},
		{"\xff\x00", "\xff\x01", true},
	}
	for _, tt := range tests {
		got, ok := prefixEnd([]byte(tt.prefix))
		if ok != tt.ok || string(got) != tt.want {
			t.Errorf("prefixEnd(%q) = %q, %t; want %q, %t", tt.prefix, got, ok, tt.want, tt.ok)
		}
	}
}

func TestOpenOptions(t *testing.T) {
	ctx := context.Background()
	for _, schema := range []string{"1abc", "a-b", "a b", `a"b`, "a;drop", strings.Repeat("x", 64), "é", "pg_catalog"} {
		if s, err := Open(ctx, "postgres://127.0.0.1:1/x", &Options{Schema: schema}); err == nil {
			s.Close()
			t.Errorf("Open(Schema: %q) = nil error, want invalid schema", schema)
		}
	}
	_, err := Open(ctx, "postgres://user:s3cret@127.0.0.1:bad/x", nil)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open(bad DSN) = %v, want an error without the password", err)
	}

	dsn := testDSN(t)
	s, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatalf("Open(nil options) = %v", err)
	}
	defer s.Close()
	if s.Schema() != DefaultSchema || s.maxRetries != DefaultMaxRetries {
		t.Errorf("defaults: schema %q, retries %d; want %q, %d", s.Schema(), s.maxRetries, DefaultSchema, DefaultMaxRetries)
	}
	s2, err := Open(ctx, dsn, &Options{Schema: "Mixed_Case_1", MaxRetries: -1})
	if err != nil {
		t.Fatalf("Open(Mixed_Case_1) = %v", err)
	}
	defer s2.Close()
	if s2.maxRetries != 0 || s2.table != `"Mixed_Case_1"."kv"` {
		t.Errorf("schema Mixed_Case_1: retries %d, table %s; want 0, %q", s2.maxRetries, s2.table, `"Mixed_Case_1"."kv"`)
	}
}

// TestNotMigrated checks that using a Store before Migrate fails with a hint.
func TestNotMigrated(t *testing.T) {
	dsn := testDSN(t)
	s, err := Open(context.Background(), dsn, &Options{Schema: freshSchema(t, dsn)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.Get([]byte("k"))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "Migrate") {
		t.Errorf("Get before Migrate = %v, want an error mentioning Migrate", err)
	}
}

// TestMigrateIdempotent runs Migrate concurrently from several Stores, then
// again, on a schema that does not exist yet.
func TestMigrateIdempotent(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	var stores []*Store
	for range 4 {
		s, err := Open(t.Context(), dsn, &Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Go(func() {
			if err := s.Migrate(t.Context()); err != nil {
				t.Errorf("concurrent Migrate() = %v", err)
			}
		})
	}
	wg.Wait()
	storetest.Put(t, stores[0], "k", "v")
	if err := stores[1].Migrate(t.Context()); err != nil {
		t.Fatalf("second Migrate() = %v", err)
	}
	if got := storetest.Get(t, stores[2], "k"); string(got) != "v" {
		t.Errorf("after Migrate again: Get(k) = %q, want %q", got, "v")
	}
}

// TestTwoStoresShareSchema checks that Stores opened separately on one
// schema, as two Vault instances would, see each other's commits at once.
func TestTwoStoresShareSchema(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	a := openSchema(t, dsn, schema, nil)
	defer a.Close()
	b := openSchema(t, dsn, schema, nil)
	defer b.Close()

	storetest.Put(t, a, "k", "from a")
	if got := storetest.Get(t, b, "k"); string(got) != "from a" {
		t.Errorf("b: Get(k) = %q, want %q", got, "from a")
	}
	storetest.Put(t, b, "k", "from b")
	err := b.Update(t.Context(), func(tx store.Tx) error { return tx.Delete([]byte("gone")) })
	if err != nil {
		t.Fatal(err)
	}
	if got := storetest.Get(t, a, "k"); string(got) != "from b" {
		t.Errorf("a: Get(k) = %q, want %q", got, "from b")
	}
	// A rolled-back Update on one is invisible to the other.
	sentinel := errors.New("no")
	err = a.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.Put([]byte("k"), []byte("rolled back")); err != nil {
			return err
		}
		return sentinel
	})
	if !errors.Is(err, sentinel) {
		t.Fatalf("failing Update = %v, want %v", err, sentinel)
	}
	if got := storetest.Get(t, b, "k"); string(got) != "from b" {
		t.Errorf("b after a's rollback: Get(k) = %q, want %q", got, "from b")
	}
	// A View's snapshot is stable: a commit by the other Store after the
	// View's first read is not seen by the View.
	err = a.View(t.Context(), func(tx store.Tx) error {
		v1, err := tx.Get([]byte("k"))
		if err != nil {
			return err
		}
		storetest.Put(t, b, "k", "later")
		v2, err := tx.Get([]byte("k"))
		if err != nil {
			return err
		}
		if !bytes.Equal(v1, v2) {
			t.Errorf("View saw %q then %q, want one snapshot", v1, v2)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := storetest.Get(t, a, "k"); string(got) != "later" {
		t.Errorf("a: Get(k) = %q, want %q", got, "later")
	}
}

// TestConcurrentIncrementsTwoStores has goroutines on two Stores of one
// schema increment one counter by read-modify-write. Without SERIALIZABLE
// isolation and the retry of serialization failures, increments would be
// lost or Updates would fail.
func TestConcurrentIncrementsTwoStores(t *testing.T) {
	const goroutines, perG = 16, 25
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	stores := []*Store{openSchema(t, dsn, schema, nil), openSchema(t, dsn, schema, nil)}
	for _, s := range stores {
		defer s.Close()
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		calls int
	)
	for g := range goroutines {
		s := stores[g%2]
		wg.Go(func() {
			for range perG {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					mu.Lock()
					calls++
					mu.Unlock()
					v, err := tx.Get([]byte("counter"))
					if err != nil {
						return err
					}
					n := 0
					if v != nil {
						if n, err = strconv.Atoi(string(v)); err != nil {
							return err
						}
					}
					return tx.Put([]byte("counter"), strconv.AppendInt(nil, int64(n+1), 10))
				})
				if err != nil {
					t.Errorf("Update() = %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got, want := string(storetest.Get(t, stores[0], "counter")), strconv.Itoa(goroutines*perG); got != want {
		t.Errorf("counter = %s, want %s", got, want)
	}
	t.Logf("%d increments took %d runs of fn (%d retries)", goroutines*perG, calls, calls-goroutines*perG)
}

// TestRetriesExhausted checks that with retries disabled a serialization
// failure is returned, recognizably, rather than retried.
func TestRetriesExhausted(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	a := openSchema(t, dsn, schema, &Options{MaxRetries: -1})
	defer a.Close()
	b := openSchema(t, dsn, schema, nil)
	defer b.Close()
	storetest.Put(t, a, "k", "0")

	calls := 0
	err := a.Update(t.Context(), func(tx store.Tx) error {
		calls++
		if _, err := tx.Get([]byte("k")); err != nil {
			return err
		}
		// Another Store commits a change to what this one read.
		storetest.Put(t, b, "k", "1")
		return tx.Put([]byte("k"), []byte("2"))
	})
	if err == nil || !isRetryable(err) {
		t.Errorf("conflicting Update without retries = %v, want a serialization failure", err)
	}
	if calls != 1 {
		t.Errorf("fn ran %d times, want 1", calls)
	}
	if got := storetest.Get(t, a, "k"); string(got) != "1" {
		t.Errorf("Get(k) = %q, want %q", got, "1")
	}

	// With retries, the same conflict on the first run is cured.
	calls = 0
	err = b.Update(t.Context(), func(tx store.Tx) error {
		calls++
		v, err := tx.Get([]byte("k"))
		if err != nil {
			return err
		}
		if calls == 1 {
			storetest.Put(t, a, "k", "3")
		}
		return tx.Put([]byte("k"), append(v, '+'))
	})
	if err != nil || calls != 2 {
		t.Errorf("conflicting Update with retries = %v after %d runs, want nil after 2", err, calls)
	}
	if got := storetest.Get(t, a, "k"); string(got) != "3+" {
		t.Errorf("Get(k) = %q, want %q", got, "3+")
	}
}

// TestPanicRollsBack checks that a panic in fn propagates, after the
// rollback, and leaves the connection pool usable.
func TestPanicRollsBack(t *testing.T) {
	s := openFresh(t)
	for range 3 { // more than one connection's worth would leak
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("recovered %v, want boom", r)
				}
			}()
			s.Update(t.Context(), func(tx store.Tx) error {
				tx.Put([]byte("k"), []byte("v"))
				tx.Get([]byte("k")) // sends the write
				panic("boom")
			})
		}()
	}
	if got := storetest.Get(t, s, "k"); got != nil {
		t.Errorf("Get(k) after panicking Updates = %q, want missing", got)
	}
	if st := s.pool.Stat(); st.AcquiredConns() != 0 {
		t.Errorf("%d connections still acquired", st.AcquiredConns())
	}
}

// TestScanPages checks Scan across page boundaries, with limits around the
// page size, Get inside the callback, and writes before the scan in the same
// transaction.
func TestScanPages(t *testing.T) {
	s := openFresh(t)
	const n = 3*pageSize + 7
	key := func(i int) string { return fmt.Sprintf("p/%05d", i) }
	err := s.Update(t.Context(), func(tx store.Tx) error {
		for i := range n {
			if err := tx.Put([]byte(key(i)), []byte(strconv.Itoa(i))); err != nil {
				return err
			}
		}
		return tx.Put([]byte("q"), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 1, pageSize - 1, pageSize, pageSize + 1, 2 * pageSize, n, n + 1} {
		err := s.Update(t.Context(), func(tx store.Tx) error {
			// Unsent writes: one inside the range, one deleting from it.
			if err := tx.Put([]byte("p/00000x"), []byte("new")); err != nil {
				return err
			}
			if err := tx.Delete([]byte(key(n - 1))); err != nil {
				return err
			}
			var got []string
			err := tx.Scan([]byte("p/"), []byte(key(0)), limit, func(k, v []byte) error {
				got = append(got, string(k))
				// Reading inside the callback is allowed.
				w, err := tx.Get(k)
				if err != nil || !bytes.Equal(v, w) {
					t.Errorf("Get(%q) in Scan = %q, %v; want %q", k, w, err, v)
				}
				return nil
			})
			if err != nil {
				return err
			}
			want := []string{"p/00000x"}
			for i := 1; i < n-1; i++ {
				want = append(want, key(i))
			}
			if limit > 0 && limit < len(want) {
				want = want[:limit]
			}
			if len(got) != len(want) || (len(got) > 0 && (got[0] != want[0] || got[len(got)-1] != want[len(want)-1])) {
				t.Errorf("limit %d: Scan visited %d keys (%v ... %v), want %d", limit, len(got), first(got), last(got), len(want))
			}
			return errors.New("roll back")
		})
		if err == nil || err.Error() != "roll back" {
			t.Fatalf("Update() = %v", err)
		}
	}
	// A write from inside the callback is refused.
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 1, func(k, v []byte) error { return tx.Put([]byte("x"), nil) })
	})
	if !errors.Is(err, errScanWriter) {
		t.Errorf("Put in Scan callback = %v, want %v", err, errScanWriter)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// TestFailedWriteSurfaces checks that a write the database refuses, though
// buffered, fails the Update and leaves nothing behind, even when fn ignores
// the error of the statement that sent it.
func TestFailedWriteSurfaces(t *testing.T) {
	s := openFresh(t)
	huge := make([]byte, 10000) // incompressible, beyond the btree entry limit
	rand.Read(huge)
	err := s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.Put([]byte("a"), []byte("1")); err != nil {
			return err
		}
		return tx.Put(huge, []byte("v"))
	})
	if err == nil {
		t.Errorf("Update(Put(huge key)) = nil, want error")
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		tx.Put([]byte("a"), []byte("1"))
		tx.Put(huge, []byte("v"))
		tx.Get([]byte("a")) // error ignored
		return nil
	})
	if err == nil {
		t.Errorf("Update ignoring a failed write = nil, want error")
	}
	if got := storetest.Get(t, s, "a"); got != nil {
		t.Errorf("Get(a) = %q, want missing", got)
	}
}

// TestContextCancelledDuringQuery cancels ctx while a statement runs on the
// server: Update returns promptly with the context's error, nothing is
// written, and the pool recovers.
func TestContextCancelledDuringQuery(t *testing.T) {
	s := openFresh(t)
	ctx, cancel := context.WithCancel(t.Context())
	err := s.Update(ctx, func(stx store.Tx) error {
		if err := stx.Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		// Sends BEGIN and the Put.
		if _, err := stx.Get([]byte("k")); err != nil {
			return err
		}
		pt := stx.(*tx)
		go cancel()
		_, err := pt.conn.Exec(pt.ctx, "SELECT pg_sleep(10)")
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update(cancelled during a query) = %v, want %v", err, context.Canceled)
	}
	if got := storetest.Get(t, s, "k"); got != nil {
		t.Errorf("Get(k) = %q, want missing", got)
	}
}

// TestNoWriteSkew has goroutines on two Stores each claim an empty range:
// read the range and, if it is empty, insert a key of its own into it. Under
// snapshot isolation (REPEATABLE READ) several would see it empty and all
// insert, as nothing they write overlaps; SERIALIZABLE must let exactly one
// claim succeed. The Vault's deduplication depends on this.
func TestNoWriteSkew(t *testing.T) {
	const goroutines = 16
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	stores := []*Store{openSchema(t, dsn, schema, nil), openSchema(t, dsn, schema, nil)}
	for _, s := range stores {
		defer s.Close()
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		s := stores[g%2]
		wg.Go(func() {
			<-start
			err := s.Update(t.Context(), func(tx store.Tx) error {
				taken := false
				err := tx.Scan([]byte("claim/"), nil, 1, func(k, v []byte) error {
					taken = true
					return store.ErrStop
				})
				if err != nil || taken {
					return err
				}
				return tx.Put(fmt.Appendf(nil, "claim/%02d", g), nil)
			})
			if err != nil {
				t.Errorf("Update() = %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	var claims []string
	err := stores[0].View(t.Context(), func(tx store.Tx) error {
		return tx.Scan([]byte("claim/"), nil, 0, func(k, v []byte) error {
			claims = append(claims, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 1 {
		t.Errorf("claims = %q, want exactly one", claims)
	}
}
