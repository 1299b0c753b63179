package vaulttest_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// TestFileSize measures the bbolt file's bytes per token, durable (fsync
// on), for plain values tokenized one per call (like bench/run.sh's
// tokenize mode, {"v": "<unique value>"}) and in batches of 1,000 values.
// It is a measurement, not a check, and runs only when TOKENVAULT_FILESIZE
// gives the number of tokens:
//
//	TOKENVAULT_FILESIZE=100000 go test -run TestFileSize -v -timeout 1h .
//
// TOKENVAULT_FILESIZE_MODE=single or batch runs one of the two. It prints
// the file size, the bytes per token, and what the store holds by key
// class (keys, key bytes, value bytes).
func TestFileSize(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TOKENVAULT_FILESIZE"))
	if n <= 0 {
		t.Skip("set TOKENVAULT_FILESIZE to a number of tokens to measure the bbolt file")
	}
	mode := os.Getenv("TOKENVAULT_FILESIZE_MODE")
	if mode == "" || mode == "single" {
		t.Run("single", func(t *testing.T) { measureFileSize(t, n, 1) })
	}
	if mode == "" || mode == "batch" {
		t.Run("batch", func(t *testing.T) { measureFileSize(t, n, 1000) })
	}
}

func measureFileSize(t *testing.T, n, batch int) {
	path := filepath.Join(t.TempDir(), "vault.db")
	s, err := bolt.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := vaulttest.NewEnvOn(t, s)
	creator := e.App(t, tokenvault.Private, "token:create")
	before := fileSize(t, path)
	start := time.Now()
	var next atomic.Int64
	calls := n / batch
	workers := 32
	if batch > 1 {
		workers = 2
	}
	var wg sync.WaitGroup
	var failed atomic.Value
	for range workers {
		wg.Go(func() {
			for {
				c := next.Add(1) - 1
				if c >= int64(calls) || failed.Load() != nil {
					return
				}
				body := map[string]any{}
				for i := range batch {
					body["v"+strconv.Itoa(i)] = fmt.Sprintf("run-%d-%d", c, i)
				}
				if _, err := e.V.Tokenize(context.Background(), creator.Key, body); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		t.Fatal(err)
	}
	took := time.Since(start)
	tokens := calls * batch
	after := fileSize(t, path)
	t.Logf("%d tokens, %d per call, in %v (%.0f tokens/s): file %d -> %d bytes, %.0f bytes per token",
		tokens, batch, took.Round(time.Millisecond), float64(tokens)/took.Seconds(), before, after, float64(after-before)/float64(tokens))
	// bbolt grows its file in steps (up to 16 MiB past the first 16 MiB);
	// the pages it has handed out (free ones included) are what the data
	// took.
	t.Logf("  pages in use or free: %d bytes, %.0f bytes per token", highWater(t, path), float64(highWater(t, path))/float64(tokens))
	reportKeyClasses(t, s, tokens)
	if dir := os.Getenv("TOKENVAULT_FILESIZE_KEEP"); dir != "" {
		// A copy for bbolt's own tools (go run go.etcd.io/bbolt/cmd/bbolt stats FILE).
		e.V.Close()
		s.Close()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("vault-%d.db", batch)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// reportKeyClasses logs what the store holds by class of key: the kind
// under tenant/<tid>/ (or idx/<name>), or the sys/ prefix.
func reportKeyClasses(t *testing.T, s store.Store, tokens int) {
	type class struct{ keys, kbytes, vbytes int }
	classes := map[string]*class{}
	err := s.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, v []byte) error {
			parts := strings.SplitN(string(k), "/", 5)
			name := parts[0]
			switch {
			case parts[0] == "tenant" && len(parts) > 3 && parts[2] == "idx":
				name = "idx/" + parts[3]
			case parts[0] == "tenant" && len(parts) > 2:
				name = parts[2]
			case len(parts) > 1:
				name = parts[0] + "/" + parts[1]
			}
			c := classes[name]
			if c == nil {
				c = &class{}
				classes[name] = c
			}
			c.keys++
			c.kbytes += len(k)
			c.vbytes += len(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, n)
	}
	sort.Strings(names)
	var total class
	for _, n := range names {
		c := classes[n]
		total.keys += c.keys
		total.kbytes += c.kbytes
		total.vbytes += c.vbytes
		if c.keys < tokens/10 {
			continue
		}
		t.Logf("  %-16s %8d keys  key %6.1f B  value %6.1f B  (per token: %.0f B)", n, c.keys,
			float64(c.kbytes)/float64(c.keys), float64(c.vbytes)/float64(c.keys), float64(c.kbytes+c.vbytes)/float64(tokens))
	}
	t.Logf("  total            %8d keys, %.0f key+value bytes per token (+16 B of bbolt leaf header per key)",
		total.keys, float64(total.kbytes+total.vbytes)/float64(tokens))
}

// highWater reads the bbolt file's newest meta page (see store/bolt's
// checkLength) and returns its high-water page id times the page size.
func highWater(t *testing.T, path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	best, bestTx := int64(0), uint64(0)
	pageSize := int64(binary.NativeEndian.Uint32(b[16+8:]))
	for _, off := range []int64{0, pageSize} {
		m := b[off+16:]
		if binary.NativeEndian.Uint32(m) != 0xED0CDAED {
			continue
		}
		ps := int64(binary.NativeEndian.Uint32(m[8:]))
		pgid, txid := binary.NativeEndian.Uint64(m[40:]), binary.NativeEndian.Uint64(m[48:])
		if txid >= bestTx {
			best, bestTx = int64(pgid)*ps, txid
		}
	}
	return best
}
