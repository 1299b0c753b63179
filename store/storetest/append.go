package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault/store"
)

// testAppend checks store.Appender, for stores that implement it: what
// Append took is there after Fold, as one unit per call, beside what
// Update wrote; the store keeps its own copy; concurrent Appends all land;
// a done context and a closed store are refused.
func testAppend(t *testing.T, su *suite) {
	s, ok := su.fresh(t).(store.Appender)
	if !ok {
		t.Skip("the store does not implement store.Appender")
	}
	st := s.(store.Store)
	seed(t, st, kv{"b", "updated"})
	key, value := []byte("a/1"), []byte("one")
	if err := s.Append(t.Context(), []store.Entry{{Key: key, Value: value}, {Key: []byte("a/2"), Value: nil}}); err != nil {
		t.Fatalf("Append() = %v", err)
	}
	copy(key, "zzz")
	copy(value, "zzz")
	if err := s.Fold(t.Context()); err != nil {
		t.Fatalf("Fold() = %v", err)
	}
	if err := s.Fold(t.Context()); err != nil {
		t.Fatalf("Fold() with nothing appended = %v", err)
	}
	var got []kv
	view(t, st, func(tx store.Tx) error { got = scanAll(t, tx, nil, nil, 0); return nil })
	want := []kv{{"a/1", "one"}, {"a/2", ""}, {"b", "updated"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after Append and Fold (-want +got):\n%s", diff)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 8*20)
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				k := fmt.Sprintf("c/%d/%02d", g, i)
				errs <- s.Append(t.Context(), []store.Entry{{Key: []byte(k), Value: []byte(k)}})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Append() = %v", err)
		}
	}
	if err := s.Fold(t.Context()); err != nil {
		t.Fatalf("Fold() = %v", err)
	}
	n := 0
	view(t, st, func(tx store.Tx) error { n = len(scanAll(t, tx, []byte("c/"), nil, 0)); return nil })
	if n != 8*20 {
		t.Errorf("after 160 concurrent Appends and Fold, %d entries", n)
	}

	done, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Append(done, []store.Entry{{Key: []byte("d"), Value: []byte("x")}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a done context = %v, want %v", err, context.Canceled)
	}
}

// testAppendClosed checks that a closed store refuses Append and Fold.
func testAppendClosed(t *testing.T, su *suite) {
	st := su.open(t)
	s, ok := st.(store.Appender)
	if !ok {
		st.Close()
		t.Skip("the store does not implement store.Appender")
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := s.Append(t.Context(), []store.Entry{{Key: []byte("k"), Value: []byte("v")}}); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Append after Close = %v, want %v", err, store.ErrClosed)
	}
	if err := s.Fold(t.Context()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Fold after Close = %v, want %v", err, store.ErrClosed)
	}
}
