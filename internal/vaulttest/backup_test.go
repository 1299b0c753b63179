package vaulttest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/memory"
)

// acked is a token some caller was answered for, with its value.
type acked struct{ id, value string }

// tokenizeLoad creates tokens with key from workers goroutines until stop
// is closed, recording each acknowledged one. A worker whose call fails
// counts it in errs and stops.
type tokenizeLoad struct {
	mu    sync.Mutex
	more  *sync.Cond // signalled on every acknowledgement
	acked []acked
	errs  atomic.Int64
	stop  chan struct{}
	done  sync.WaitGroup
}

func startTokenizeLoad(v *tokenvault.Vault, key tokenvault.Credential, workers int) *tokenizeLoad {
	l := &tokenizeLoad{stop: make(chan struct{})}
	l.more = sync.NewCond(&l.mu)
	for w := range workers {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				value := fmt.Sprintf("value-%d-%d", w, i)
				tok, err := v.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "token", Data: value})
				if err != nil {
					l.mu.Lock()
					l.errs.Add(1)
					l.more.Broadcast()
					l.mu.Unlock()
					return
				}
				l.mu.Lock()
				l.acked = append(l.acked, acked{tok.ID, value})
				l.more.Broadcast()
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// until waits for at least n acknowledged tokens (or a failure) and returns
// a copy of them.
func (l *tokenizeLoad) until(n int) []acked {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.acked) < n && l.errs.Load() == 0 {
		l.more.Wait()
	}
	return append([]acked(nil), l.acked...)
}

func (l *tokenizeLoad) end() { close(l.stop); l.done.Wait() }

// TestBackupDuringLoad backs a bbolt store up while tokens are being
// created: the snapshot opens as a new store with the same master key, and
// every token acknowledged before the backup began reads back with its
// value.
func TestBackupDuringLoad(t *testing.T) {
	dir := t.TempDir()
	bs, err := bolt.Open(filepath.Join(dir, "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e := vaulttest.NewEnvOn(t, bs)
	rw := e.Reader(t, "reveal", "token:create", "token:read")
	load := startTokenizeLoad(e.V, rw.Key, 4)
	before := load.until(200)
	var buf bytes.Buffer
	err = e.V.Backup(ctx, &buf)
	after := load.until(len(before) + 50) // the load went on
	load.end()
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if n := load.errs.Load(); n > 0 {
		t.Fatalf("%d tokenize calls failed during the backup", n)
	}
	path := filepath.Join(dir, "restored.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: e.Key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatalf("Open(snapshot): %v", err)
	}
	defer v.Close()
	for _, a := range before {
		tok, err := v.GetToken(ctx, rw.Key, a.id)
		if err != nil || tok.Data != a.value {
			t.Fatalf("GetToken(%s) from the snapshot = %v, %v; want data %q", a.id, tok, err, a.value)
		}
	}
	t.Logf("%d tokens acknowledged before the backup, %d by the end of the load", len(before), len(after))

	if _, err := tokenvault.Open(ctx, tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}}); err == nil {
		t.Error("the snapshot opened with another master key")
	}
}

// TestBackupUnsupported: a store that cannot snapshot is ErrNoSnapshot,
// Unprocessable, and nothing is written.
func TestBackupUnsupported(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New())
	var buf bytes.Buffer
	err := e.V.Backup(ctx, &buf)
	vaulttest.WantKind(t, "Backup on a memory store", err, tokenvault.Unprocessable)
	if err != tokenvault.ErrNoSnapshot || buf.Len() != 0 {
		t.Errorf("Backup = %v with %d bytes written, want ErrNoSnapshot and nothing", err, buf.Len())
	}
}
