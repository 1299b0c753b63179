package bolt

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// putMany puts n values of size bytes from 16 goroutines, so that most
// Updates share commits and some run alone.
func putMany(t *testing.T, s *Store, n, size int) {
	t.Helper()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < n; i += 16 {
				err := s.Update(context.Background(), func(tx store.Tx) error {
					return tx.Put(fmt.Appendf(nil, "k%06d", i), bytes.Repeat([]byte{byte(i)}, size))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestReserveKeepsTheFileWrittenAhead: a durable store's file has no
// holes (bbolt's own growth leaves them), its reserve stays ahead of the
// data, and the file checks and reads back whole after a reopen.
func TestReserveKeepsTheFileWrittenAhead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n, size = 1200, 4000 // about 5 MB: the reserve grows several times
	putMany(t, s, n, size)
	r := s.reserve
	if r.off.Load() {
		t.Fatal("the reserve switched itself off")
	}
	if hw := highWater(s.db); r.end.Load() <= hw {
		t.Fatalf("reserve ends at %d, not past the high-water mark %d", r.end.Load(), hw)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if allocated := st.Blocks * 512; allocated < st.Size {
		t.Fatalf("the file has holes: %d bytes allocated of %d", allocated, st.Size)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path); err != nil {
		t.Fatalf("Check after writing with a reserve: %v", err)
	}
	s, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.View(context.Background(), func(tx store.Tx) error {
		for i := range n {
			v, err := tx.Get(fmt.Appendf(nil, "k%06d", i))
			if err != nil {
				return err
			}
			if !bytes.Equal(v, bytes.Repeat([]byte{byte(i)}, size)) {
				return fmt.Errorf("value %d reads back as %d bytes", i, len(v))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReserveSwitchesOffOnFailure: a reserve that cannot be written
// switches off, and the store goes on as bbolt alone would.
func TestReserveSwitchesOffOnFailure(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, "test.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.reserve.path = filepath.Join(dir, "missing", "test.db")
	s.reserve.end.Store(0)
	putMany(t, s, 200, 4000)
	if !s.reserve.off.Load() {
		t.Fatal("the reserve did not switch off")
	}
	err = s.View(context.Background(), func(tx store.Tx) error {
		v, err := tx.Get([]byte("k000199"))
		if err == nil && len(v) != 4000 {
			err = fmt.Errorf("k000199 holds %d bytes", len(v))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.reserve.path); !os.IsNotExist(err) {
		t.Fatalf("the reserve wrote elsewhere: %v", err)
	}
}

// TestNoReserveWithoutSync: NoSync stores (tests) write no zeros.
func TestNoReserveWithoutSync(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	defer s.Close()
	if s.reserve != nil || s.group.reserve != nil {
		t.Fatal("a NoSync store has a reserve")
	}
}

// TestReserveLeftToBigCommits: commits that append megabytes (batches)
// do not grow the reserve, which would only make them write twice.
func TestReserveLeftToBigCommits(t *testing.T) {
	s := openTemp(t, nil)
	defer s.Close()
	for i := range 6 {
		err := s.Update(context.Background(), func(tx store.Tx) error {
			for j := range 250 {
				if err := tx.Put(fmt.Appendf(nil, "b%02d-%03d", i, j), bytes.Repeat([]byte{1}, 4000)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if end, hw := s.reserve.end.Load(), highWater(s.db); end > hw {
		t.Fatalf("the reserve ends at %d, past the high-water mark %d: big commits grew it", end, hw)
	}
}
