package bolt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// TestWriteSnapshot: the snapshot is a bbolt file holding what was
// committed before it began, and opens with Open; a later write is not in
// it.
func TestWriteSnapshot(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	defer s.Close()
	put := func(k, v string) {
		t.Helper()
		if err := s.Update(ctx, func(tx store.Tx) error { return tx.Put([]byte(k), []byte(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "1")
	put("b", "2")
	var buf bytes.Buffer
	n, err := s.WriteSnapshot(ctx, &buf)
	if err != nil || n != int64(buf.Len()) || n == 0 {
		t.Fatalf("WriteSnapshot = %d, %v (%d bytes written)", n, err, buf.Len())
	}
	put("c", "3")
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open(snapshot): %v", err)
	}
	defer c.Close()
	got := map[string]string{}
	err = c.View(ctx, func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, v []byte) error {
			got[string(k)] = string(v)
			return nil
		})
	})
	if err != nil || len(got) != 2 || got["a"] != "1" || got["b"] != "2" {
		t.Errorf("snapshot holds %v, %v; want a=1 b=2", got, err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.WriteSnapshot(cctx, &buf); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteSnapshot with a cancelled context = %v", err)
	}
	s.Close()
	if _, err := s.WriteSnapshot(ctx, &buf); !errors.Is(err, store.ErrClosed) {
		t.Errorf("WriteSnapshot after Close = %v, want ErrClosed", err)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, "ok.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.WriteSnapshot(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := Check(filepath.Join(dir, "ok.db")); err != nil {
		t.Errorf("Check(a store) = %v", err)
	}
	for name, content := range map[string][]byte{
		"text.db":      []byte("not a database"),
		"truncated.db": buf.Bytes()[:buf.Len()/2],
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Check(path); err == nil {
			t.Errorf("Check(%s) = nil, want an error", name)
		}
	}
}
