package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/tokenvault/tokenvault/store"
)

// filled is a closed store at a new path holding n keys, and its page size.
func filled(t *testing.T, n int) (path string, pageSize int) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(context.Background(), func(tx store.Tx) error {
		for i := range n {
			if err := tx.Put(fmt.Appendf(nil, "key/%06d", i), make([]byte, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pageSize = s.db.Info().PageSize
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, pageSize
}

// overwrite writes b at page pgid of the file at path.
func overwrite(t *testing.T, path string, pageSize int, pgid uint64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(pgid)*int64(pageSize)); err != nil {
		t.Fatal(err)
	}
}

// wantDamaged fails unless err is a *DamagedError naming path.
func wantDamaged(t *testing.T, what string, err error, path string) {
	t.Helper()
	var d *DamagedError
	if !errors.Is(err, ErrDamaged) || !errors.As(err, &d) || d.Path != path {
		t.Errorf("%s = %v, want a *DamagedError naming %s", what, err, path)
	}
}

// bucketRoot is the page holding the root of the store's bucket.
func bucketRoot(t *testing.T, path string) uint64 {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var root uint64
	db.View(func(tx *bbolt.Tx) error {
		root = uint64(tx.Bucket(bucketName).Root())
		return nil
	})
	return root
}

// freelistOf is the freelist page the newer meta page of the file at
// path names.
func freelistOf(t *testing.T, path string, pageSize int) uint64 {
	return binary.NativeEndian.Uint64(newerMeta(t, path, pageSize)[32:])
}

// rootOf is the root bucket's page that the newer meta page of the file
// at path names.
func rootOf(t *testing.T, path string, pageSize int) uint64 {
	return binary.NativeEndian.Uint64(newerMeta(t, path, pageSize)[16:])
}

// newerMeta is the meta of the file at path with the higher txid.
func newerMeta(t *testing.T, path string, pageSize int) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m0, m1 := b[metaStart:], b[pageSize+metaStart:]
	if binary.NativeEndian.Uint64(m1[48:]) > binary.NativeEndian.Uint64(m0[48:]) {
		return m1
	}
	return m0
}

// TestOpenRefusesADamagedFile: Open of a file with a page overwritten
// returns a *DamagedError naming the file (no panic), whichever page, and
// Check (of a backup) an error naming it.
func TestOpenRefusesADamagedFile(t *testing.T) {
	t.Parallel()
	junk := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + 3)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string, pageSize int)
	}{
		{"meta pages zeroed", func(t *testing.T, path string, pageSize int) {
			overwrite(t, path, pageSize, 0, make([]byte, 2*pageSize))
		}},
		{"bucket root overwritten", func(t *testing.T, path string, pageSize int) {
			overwrite(t, path, pageSize, bucketRoot(t, path), junk(pageSize))
		}},
		{"every page past the meta pages overwritten", func(t *testing.T, path string, pageSize int) {
			fi, _ := os.Stat(path)
			for p := uint64(2); p < uint64(fi.Size())/uint64(pageSize); p++ {
				overwrite(t, path, pageSize, p, junk(pageSize))
			}
		}},
		{"freelist page overwritten", func(t *testing.T, path string, pageSize int) {
			overwrite(t, path, pageSize, freelistOf(t, path, pageSize), junk(pageSize))
		}},
		{"freelist page zeroed", func(t *testing.T, path string, pageSize int) {
			overwrite(t, path, pageSize, freelistOf(t, path, pageSize), make([]byte, pageSize))
		}},
		{"cut short", func(t *testing.T, path string, pageSize int) {
			fi, _ := os.Stat(path)
			os.Truncate(path, fi.Size()/2)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, pageSize := filled(t, 3000)
			tc.damage(t, path, pageSize)
			s, err := Open(path, nil)
			if err == nil {
				s.Close()
			}
			wantDamaged(t, "Open of a damaged file", err, path)
			if err := Check(path); err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("Check of a damaged file = %v, want an error naming it", err)
			}
		})
	}
}

// TestDamageMetInATransactionIsAnError: a page damaged while the store is
// open (a child pointer sent far past the end of the file, which bbolt
// follows into unmapped memory) fails the View and the Update that read
// it with a *DamagedError, instead of a fault that ends the process; a
// panic of the caller's own function still propagates.
func TestDamageMetInATransactionIsAnError(t *testing.T) {
	t.Parallel()
	path, pageSize := filled(t, 3000)
	root := bucketRoot(t, path)
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The bucket's root is a branch page: a 16-byte header, then elements
	// of (pos, ksize uint32, pgid uint64). Its first child goes 64 GiB out.
	far := make([]byte, 8)
	binary.NativeEndian.PutUint64(far, 1<<24)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(far, int64(root)*int64(pageSize)+16+8); err != nil {
		t.Fatal(err)
	}
	f.Close()

	ctx := context.Background()
	err = s.View(ctx, func(tx store.Tx) error {
		_, err := tx.Get([]byte("key/000000"))
		return err
	})
	wantDamaged(t, "Get of a key under a damaged page", err, path)
	err = s.View(ctx, func(tx store.Tx) error {
		return tx.Scan([]byte("key/"), nil, 0, func(k, v []byte) error { return nil })
	})
	wantDamaged(t, "Scan over a damaged page", err, path)
	err = s.Update(ctx, func(tx store.Tx) error { return tx.Put([]byte("key/000000"), []byte("x")) })
	wantDamaged(t, "Put under a damaged page", err, path)
	// Keys under other pages still read.
	err = s.View(ctx, func(tx store.Tx) error {
		v, err := tx.Get([]byte("key/002999"))
		if err == nil && v == nil {
			err = errors.New("key/002999 missing")
		}
		return err
	})
	if err != nil {
		t.Errorf("Get of a key under a sound page = %v", err)
	}
	// The caller's own panic inside a Scan is not taken for damage.
	func() {
		defer func() {
			if p := recover(); p != "own" {
				t.Errorf("a Scan function's panic = %v, want it to propagate", p)
			}
		}()
		s.View(ctx, func(tx store.Tx) error {
			return tx.Scan([]byte("key/0029"), nil, 0, func(k, v []byte) error { panic("own") })
		})
	}()
}

// TestDamagedRootInAnUpdateIsAnError: an Update on a file whose root page
// was overwritten while it was open (the store finds its bucket there,
// before the caller's function runs) returns a *DamagedError naming the
// file, and neither it nor Close panics: the panic is bbolt's, not the
// function's.
func TestDamagedRootInAnUpdateIsAnError(t *testing.T) {
	t.Parallel()
	path, pageSize := filled(t, 3000)
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := rootOf(t, path, pageSize)
	garbage := make([]byte, 16)
	binary.NativeEndian.PutUint64(garbage, 0x9b9b9b9b9b9b9b9b)
	overwrite(t, path, pageSize, root, garbage)

	ran := false
	err = s.Update(context.Background(), func(tx store.Tx) error {
		ran = true
		return tx.Put([]byte("key/000000"), []byte("x"))
	})
	wantDamaged(t, "Update over a damaged root page", err, path)
	if ran {
		t.Error("the function ran in a transaction whose bucket could not be found")
	}
	s.Close() // its error is the damage again; what matters is no panic
}

// TestCheckErrorSaysNoPanic: bbolt words the page at which its check
// stopped "panic: <reason>"; a report of it says the file is damaged
// there, and never "panic", which would read as a crash.
func TestCheckErrorSaysNoPanic(t *testing.T) {
	got := checkError(fmt.Errorf("panic: %v", "assertion failed: Page expected to be: 8, but self identifies as 9"))
	if strings.Contains(got.Error(), "panic") || !strings.Contains(got.Error(), "Page expected to be: 8") {
		t.Errorf("checkError = %q", got)
	}
	other := errors.New("page 12: unreachable unfreed")
	if got := checkError(other); got != other {
		t.Errorf("checkError of another error = %v, want it as it is", got)
	}
}
