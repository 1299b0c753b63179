package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/store"
)

// TestOwnTransactionSkipsTheGroup: an Update marked with
// store.WithOwnTransaction runs beside a shared transaction rather than in
// it. A shared Update holds the group committer (its function waits); an
// Update made while it is in flight would queue behind it, so the marked
// one committing first shows that it did not.
func TestOwnTransactionSkipsTheGroup(t *testing.T) {
	s := openFresh(t)
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	shared := make(chan error, 1)
	go func() {
		shared <- s.Update(ctx, func(tx store.Tx) error {
			close(entered)
			<-release
			return tx.Put([]byte("shared"), []byte("1"))
		})
	}()
	<-entered
	// Two Updates in flight from here on: a further one is grouped.
	blocker := make(chan error, 1)
	go func() {
		blocker <- s.updateShared(ctx, func(tx store.Tx) error {
			<-release
			return tx.Put([]byte("queued"), []byte("1"))
		})
	}()
	own := make(chan error, 1)
	go func() {
		own <- s.Update(store.WithOwnTransaction(ctx), func(tx store.Tx) error {
			return tx.Put([]byte("own"), []byte("1"))
		})
	}()
	select {
	case err := <-own:
		if err != nil {
			t.Fatalf("own transaction: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("an Update with its own transaction waited for the group committer")
	}
	close(release)
	for _, ch := range []chan error{shared, blocker} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if err := s.View(ctx, func(tx store.Tx) error {
		for _, k := range []string{"shared", "queued", "own"} {
			if v, err := tx.Get([]byte(k)); err != nil || string(v) != "1" {
				t.Errorf("%s = %q, %v", k, v, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
