package tokenvault_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
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
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, k := range w.keys {
		if strings.Contains(k, "/idx/tl-") {
			out = append(out, k)
		}
	}
	w.keys = nil
	return out
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

// TestTokenUpdateWritesNoListEntryItKeeps: an update that keeps a token's
// type and containers (metadata, data) writes none of its list index
// entries (it used to remove and put back each one); one that moves it
// writes those of the containers it leaves and joins, and the lists
// follow.
func TestTokenUpdateWritesNoListEntryItKeeps(t *testing.T) {
	w := &writeLog{Store: memory.New()}
	e := newEnvOn(t, w)
	app := e.app(t, tokenvault.Private, "token:create", "token:read", "token:update")
	tok, err := e.v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x", Containers: []string{"/a/b/"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.listWrites(); len(got) != 3 { // the type's, /a/'s and /a/b/'s
		t.Fatalf("create wrote %d list entries, want 3", len(got))
	}
	for _, patch := range []string{`{"metadata": {"k": "v"}}`, `{"data": "y"}`, `{"containers": ["/a/b/"]}`} {
		if _, err := e.v.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(patch)); err != nil {
			t.Fatal(err)
		}
		if got := w.listWrites(); len(got) != 0 {
			t.Errorf("update %s wrote %d list entries, want none", patch, len(got))
		}
	}
	if _, err := e.v.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(`{"containers": ["/a/c/"]}`)); err != nil {
		t.Fatal(err)
	}
	// /a/b/ left, /a/c/ joined; the type's and /a/'s are removed and put
	// back (the move relists the token).
	if got := w.listWrites(); len(got) == 0 {
		t.Error("a move wrote no list entry")
	}
	for c, want := range map[string]int{"/a/": 1, "/a/b/": 0, "/a/c/": 1} {
		page, err := e.v.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{Container: c})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != want || page.Pagination.TotalItems != want {
			t.Errorf("container %s: %d tokens, total %d; want %d", c, len(page.Data), page.Pagination.TotalItems, want)
		}
	}
}
