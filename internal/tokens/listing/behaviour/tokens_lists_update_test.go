package listing_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// writeLog is a store that records the keys its transactions put or
// delete.
type writeLog struct {
	store.Store
	mu   sync.Mutex
	keys []string
}

func (w *writeLog) Update(ctx context.Context, fn func(store.Tx) error) error {
	return w.Store.Update(ctx, func(tx store.Tx) error { return fn(&loggedTx{Tx: tx, w: w}) })
}

// listWrites returns the list index keys written since the last call.
func (w *writeLog) listWrites() []string {
	list, _ := w.listAndShapeWrites()
	return list
}

// listAndShapeWrites returns the list index keys and the shape registry
// keys written since the last call.
func (w *writeLog) listAndShapeWrites() (list, shapes []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.keys {
		if strings.Contains(k, "/idx/tl-") {
			list = append(list, k)
		}
		if strings.Contains(k, "/token_shape/") {
			shapes = append(shapes, k)
		}
	}
	w.keys = nil
	return list, shapes
}

type loggedTx struct {
	store.Tx
	w *writeLog
}

func (t *loggedTx) Put(k, v []byte) error {
	t.w.mu.Lock()
	t.w.keys = append(t.w.keys, string(k))
	t.w.mu.Unlock()
	return t.Tx.Put(k, v)
}

func (t *loggedTx) Delete(k []byte) error {
	t.w.mu.Lock()
	t.w.keys = append(t.w.keys, string(k))
	t.w.mu.Unlock()
	return t.Tx.Delete(k)
}

// TestTokenUpdateWritesNoListEntryItKeeps: a token has one list entry;
// an update that keeps its type and containers (metadata, data) writes
// none (it used to remove and put back each one); one that moves it
// removes its entry and writes its new one, and the lists follow.
func TestTokenUpdateWritesNoListEntryItKeeps(t *testing.T) {
	w := &writeLog{Store: memory.New()}
	e := vaulttest.NewEnvOn(t, w)
	app := e.App(t, tokenvault.Private, "token:create", "token:read", "token:update")
	tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x", Containers: []string{"/a/b/"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.listWrites(); len(got) != 1 { // its shape's: token in /a/b/
		t.Fatalf("create wrote %d list entries %q, want 1", len(got), got)
	}
	for _, patch := range []string{`{"metadata": {"k": "v"}}`, `{"data": "y"}`, `{"containers": ["/a/b/"]}`} {
		if _, err := e.V.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(patch)); err != nil {
			t.Fatal(err)
		}
		if got := w.listWrites(); len(got) != 0 {
			t.Errorf("update %s wrote %d list entries, want none", patch, len(got))
		}
	}
	if _, err := e.V.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(`{"containers": ["/a/c/"]}`)); err != nil {
		t.Fatal(err)
	}
	// The entry of (token, /a/b/) removed, that of (token, /a/c/) put.
	if got := w.listWrites(); len(got) != 2 {
		t.Errorf("a move wrote %d list entries %q, want 2", len(got), got)
	}
	for c, want := range map[string]int{"/a/": 1, "/a/b/": 0, "/a/c/": 1} {
		page, err := e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{Container: c})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != want || page.Pagination.TotalItems != want {
			t.Errorf("container %s: %d tokens, total %d; want %d", c, len(page.Data), page.Pagination.TotalItems, want)
		}
	}
}

// TestTokenizeWritesOneListEntry: the commit of a tokenize writes exactly
// one list entry per token, whatever its containers (a default token is
// in /general/high/, a card in /pci/high/: before, each had an entry for
// its type and one for each of its containers' ancestors), and a shape's
// registry entry only with its first token.
func TestTokenizeWritesOneListEntry(t *testing.T) {
	w := &writeLog{Store: memory.New()}
	e := vaulttest.NewEnvOn(t, w)
	app := e.App(t, tokenvault.Private, "token:create", "token:read")
	card := map[string]any{"type": "card", "data": map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2039}}
	deep := map[string]any{"type": "token", "data": "d", "containers": []any{"/a/b/c/d/", "/a/b/e/", "/x/"}}
	w.listAndShapeWrites()
	for i, tc := range []struct {
		name      string
		body      any
		entries   int
		newShapes int
	}{
		{"default", []any{"v1"}, 1, 1},
		{"default again", []any{"v2"}, 1, 0},
		{"card", card, 1, 1},
		{"three containers", deep, 1, 1},
		{"a batch of four", []any{"v3", "v4", card, deep}, 4, 0},
	} {
		if _, err := e.V.Tokenize(ctx, app.Key, tc.body); err != nil {
			t.Fatalf("%d %s: %v", i, tc.name, err)
		}
		list, shapes := w.listAndShapeWrites()
		if len(list) != tc.entries || len(shapes) != tc.newShapes {
			t.Errorf("tokenize %s wrote %d list entries %q and %d shape entries, want %d and %d",
				tc.name, len(list), list, len(shapes), tc.entries, tc.newShapes)
		}
	}
}

// registryReads is a store that counts the reads (gets and scans) of
// token shape registry keys.
type registryReads struct {
	store.Store
	mu sync.Mutex
	n  int
}

func (r *registryReads) View(ctx context.Context, fn func(store.Tx) error) error {
	return r.Store.View(ctx, func(tx store.Tx) error { return fn(&registryTx{Tx: tx, r: r}) })
}

func (r *registryReads) Update(ctx context.Context, fn func(store.Tx) error) error {
	return r.Store.Update(ctx, func(tx store.Tx) error { return fn(&registryTx{Tx: tx, r: r}) })
}

func (r *registryReads) reads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.n
	r.n = 0
	return n
}

type registryTx struct {
	store.Tx
	r *registryReads
}

func (t *registryTx) saw(k []byte) {
	if strings.Contains(string(k), "/token_shape/") {
		t.r.mu.Lock()
		t.r.n++
		t.r.mu.Unlock()
	}
}

func (t *registryTx) Get(k []byte) ([]byte, error) {
	t.saw(k)
	return t.Tx.Get(k)
}

func (t *registryTx) Scan(prefix, after []byte, limit int, fn func(k, v []byte) error) error {
	t.saw(prefix)
	return t.Tx.Scan(prefix, after, limit, fn)
}

// TestTokenizeOfAKnownShapeReadsNoRegistry: the commit of a token of a
// shape its Vault already knows reads nothing of the tenant's shape
// registry, a row every instance shares; only the first token of a shape
// in the process reads (and, new in the tenant, writes) its entry.
func TestTokenizeOfAKnownShapeReadsNoRegistry(t *testing.T) {
	r := &registryReads{Store: memory.New()}
	e := vaulttest.NewEnvOn(t, r)
	app := e.App(t, tokenvault.Private, "token:create")
	r.reads()
	for i, body := range [][]any{{"first"}, {"again"}, {"a", "batch", "of", "four"}} {
		if _, err := e.V.Tokenize(ctx, app.Key, body); err != nil {
			t.Fatal(err)
		}
		if n := r.reads(); i == 0 && n == 0 {
			t.Error("the first token of a shape read nothing of the registry")
		} else if i > 0 && n != 0 {
			t.Errorf("tokenize %v of a known shape read the registry %d times, want none", body, n)
		}
	}
}
