package memory

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// TestSortedKeysFollowWrites puts, deletes, re-puts and rolls back keys at
// random, scanning now and then, and checks every time that the sorted key
// index is exactly the map's keys in order: the incremental merge must
// agree with a rebuild.
func TestSortedKeysFollowWrites(t *testing.T) {
	s := New()
	rng := rand.New(rand.NewPCG(1, 2))
	errRollback := fmt.Errorf("roll back")
	for round := range 2000 {
		s.Update(context.Background(), func(tx store.Tx) error {
			for range rng.IntN(5) + 1 {
				k := fmt.Appendf(nil, "k%03d", rng.IntN(200))
				if rng.IntN(3) == 0 {
					tx.Delete(k)
				} else {
					tx.Put(k, []byte("v"))
				}
			}
			if rng.IntN(10) == 0 {
				return errRollback
			}
			return nil
		})
		if round%7 != 0 {
			continue
		}
		s.mu.RLock()
		got := s.sortedKeys()
		want := slices.Sorted(maps.Keys(s.m))
		s.mu.RUnlock()
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: sorted keys %v, want %v", round, got, want)
		}
	}
}
