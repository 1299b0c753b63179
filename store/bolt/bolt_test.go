package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/storetest"
)

func openTemp(t *testing.T, opts *Options) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "test.db"), opts)
	if err != nil {
		t.Fatalf("Open() = %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	// Durable commits, as in production.
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t, nil) })
}

func TestConformanceNoSync(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t, &Options{NoSync: true}) })
}

func TestConformanceFaultStore(t *testing.T) {
	// The wrapper must be transparent while no fault is armed, including
	// on a backend that batches and reruns fns.
	storetest.Run(t, func(t *testing.T) store.Store {
		return storetest.NewFaultStore(openTemp(t, &Options{NoSync: true}))
	})
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open() = %v", err)
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	storetest.Put(t, s, "k", "v")
	storetest.Put(t, s, "empty", "")
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("file mode = %v, want %v", got, os.FileMode(0o600))
	}

	s, err = Open(path, nil)
	if err != nil {
		t.Fatalf("reopen: Open() = %v", err)
	}
	defer s.Close()
	if got := storetest.Get(t, s, "k"); string(got) != "v" {
		t.Errorf("after reopen Get(%q) = %q, want %q", "k", got, "v")
	}
	if got := storetest.Get(t, s, "empty"); got == nil || len(got) != 0 {
		t.Errorf("after reopen Get(%q) = %#v, want non-nil empty", "empty", got)
	}
}

// TestOpenLocked checks that a second Open of a file in use fails with an
// error within its timeout instead of hanging. bbolt's flock is per open file
// description, so this works within one process.
func TestOpenLocked(t *testing.T) {
	s := openTemp(t, nil)
	defer s.Close()

	type result struct {
		s   *Store
		err error
	}
	done := make(chan result, 1)
	go func() {
		s2, err := Open(s.Path(), &Options{Timeout: 50 * time.Millisecond})
		done <- result{s2, err}
	}()
	select {
	case r := <-done:
		if r.err == nil {
			r.s.Close()
			t.Fatalf("second Open() = nil error, want lock timeout")
		}
		if !errors.Is(r.err, berrors.ErrTimeout) {
			t.Errorf("second Open() = %v, want error wrapping %v", r.err, berrors.ErrTimeout)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("second Open() still blocked after 30s, want lock timeout error")
	}
}

// TestConcurrentUpdatesCoalesce checks that many concurrent Updates all
// commit, and that batching merged some of them: bbolt gives every committed
// write transaction a new ID, so fewer new IDs than Updates means batches.
func TestConcurrentUpdatesCoalesce(t *testing.T) {
	const goroutines, perG = 64, 20
	s := openTemp(t, nil)
	defer s.Close()
	txID := func() int {
		var id int
		s.db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil })
		return id
	}

	before := txID()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					return tx.Put(fmt.Appendf(nil, "g%02d/%02d", g, i), []byte("x"))
				})
				if err != nil {
					t.Errorf("Update() = %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	commits := txID() - before

	var n int
	err := s.View(t.Context(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, v []byte) error { n++; return nil })
	})
	if err != nil || n != goroutines*perG {
		t.Fatalf("after concurrent Updates: %d keys, error %v; want %d, nil", n, err, goroutines*perG)
	}
	t.Logf("%d Updates in %d commits", goroutines*perG, commits)
	if commits >= goroutines*perG {
		t.Errorf("%d Updates took %d commits, want fewer (batching)", goroutines*perG, commits)
	}
	if got := s.inflight.Load(); got != 0 {
		t.Errorf("inflight = %d after all Updates returned, want 0", got)
	}
}

// TestPanicKeepsInflightBalanced checks that a panicking fn, which bypasses
// the normal return path, does not leave every later Update batched.
func TestPanicKeepsInflightBalanced(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	defer s.Close()
	func() {
		defer func() { recover() }()
		s.Update(t.Context(), func(store.Tx) error { panic("boom") })
	}()
	if got := s.inflight.Load(); got != 0 {
		t.Errorf("inflight = %d after a panicking Update, want 0", got)
	}
	storetest.Put(t, s, "k", "v")
}

func TestErrorsWrapped(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	defer s.Close()
	sentinel := errors.New("mine")
	tests := []struct {
		name string
		fn   func(store.Tx) error
		want error
	}{
		{"fn error unchanged", func(store.Tx) error { return sentinel }, sentinel},
		{"key too large", func(tx store.Tx) error {
			return tx.Put(make([]byte, bbolt.MaxKeySize+1), nil)
		}, berrors.ErrKeyTooLarge},
		{"empty key", func(tx store.Tx) error { return tx.Put(nil, []byte("v")) }, berrors.ErrKeyRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Update(t.Context(), tt.fn)
			if !errors.Is(err, tt.want) {
				t.Errorf("Update() = %v, want error wrapping %v", err, tt.want)
			}
		})
	}
	err := s.View(context.Background(), func(tx store.Tx) error { return tx.Put([]byte("k"), nil) })
	if !errors.Is(err, berrors.ErrTxNotWritable) {
		t.Errorf("View(Put) = %v, want error wrapping %v", err, berrors.ErrTxNotWritable)
	}
}
