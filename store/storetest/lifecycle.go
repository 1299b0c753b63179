package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/store"
)

func testContext(t *testing.T, su *suite) {
	putK := func(tx store.Tx) error { return tx.Put([]byte("k"), []byte("v")) }
	cancelled := func(t *testing.T) context.Context {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		return ctx
	}

	t.Run("cancelled before Update", func(t *testing.T) {
		s := su.fresh(t)
		if err := s.Update(cancelled(t), putK); !errors.Is(err, context.Canceled) {
			t.Errorf("Update(cancelled ctx) = %v, want %v", err, context.Canceled)
		}
		wantContents(t, s, nil)
	})
	t.Run("deadline passed before Update", func(t *testing.T) {
		s := su.fresh(t)
		ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
		defer cancel()
		if err := s.Update(ctx, putK); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Update(expired ctx) = %v, want %v", err, context.DeadlineExceeded)
		}
		wantContents(t, s, nil)
	})
	t.Run("cancelled before View", func(t *testing.T) {
		s := su.fresh(t)
		err := s.View(cancelled(t), func(tx store.Tx) error { return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("View(cancelled ctx) = %v, want %v", err, context.Canceled)
		}
	})
	t.Run("cancelled inside fn", func(t *testing.T) {
		s := su.fresh(t)
		seed(t, s, kv{"old", "1"})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		err := s.Update(ctx, func(tx store.Tx) error {
			if err := tx.Put([]byte("k"), []byte("v")); err != nil {
				return err
			}
			if err := tx.Put([]byte("old"), []byte("2")); err != nil {
				return err
			}
			cancel() // idempotent, so a second run of fn is fine
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Update(ctx cancelled in fn) = %v, want %v", err, context.Canceled)
		}
		wantContents(t, s, []kv{{"old", "1"}})
	})
}

func testClosed(t *testing.T, su *suite) {
	s := su.open(t)
	seed(t, s, kv{"k", "v"})
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	called := false
	fn := func(tx store.Tx) error { called = true; return nil }
	if err := s.Update(t.Context(), fn); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Update after Close = %v, want %v", err, store.ErrClosed)
	}
	if err := s.View(t.Context(), fn); !errors.Is(err, store.ErrClosed) {
		t.Errorf("View after Close = %v, want %v", err, store.ErrClosed)
	}
	if called {
		t.Errorf("fn was called after Close")
	}
}

// testCloseWaitsForTx checks that Close lets an Update in progress commit.
func testCloseWaitsForTx(t *testing.T, su *suite) {
	s := su.open(t)
	var once sync.Once
	started := make(chan struct{})
	release := make(chan struct{})
	updateErr := make(chan error, 1)
	go func() {
		updateErr <- s.Update(context.Background(), func(tx store.Tx) error {
			if err := tx.Put([]byte("k"), []byte("v")); err != nil {
				return err
			}
			once.Do(func() { close(started) })
			<-release
			return nil
		})
	}()
	<-started
	closeErr := make(chan error, 1)
	go func() { closeErr <- s.Close() }()
	// Give Close a chance to start waiting; the test is valid either way.
	time.Sleep(20 * time.Millisecond)
	close(release)
	if err := <-updateErr; err != nil {
		t.Errorf("Update in progress during Close = %v, want nil", err)
	}
	if err := <-closeErr; err != nil {
		t.Errorf("Close() = %v, want nil", err)
	}
	if err := s.View(t.Context(), func(store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Errorf("View after Close = %v, want %v", err, store.ErrClosed)
	}
}
