package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

func openStore(t *testing.T) *bolt.Store {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "test.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// do sends a request with key and returns the status and body.
func do(t *testing.T, method, url, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(httpapi.APIKeyHeader, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func TestHandler(t *testing.T) {
	st := openStore(t)
	srv := httptest.NewServer(newHandler(st))
	defer srv.Close()

	if status, body := do(t, "GET", srv.URL+"/health", "", ""); status != 200 || string(body) != "ok" {
		t.Errorf("GET /health: %d %q, want 200 ok", status, body)
	}
	status, body := do(t, "POST", srv.URL+"/tokenize", "", `{"a":"x","b":{"n":1}}`)
	var ids map[string]string
	if status != 201 || json.Unmarshal(body, &ids) != nil || len(ids) != 2 || ids["a"] == "" || ids["b"] == "" {
		t.Fatalf("POST /tokenize two values: %d %s, want 201 and an id for a and b", status, body)
	}
	status, body = do(t, "POST", srv.URL+"/tokenize", "", `{"type":"card","data":{"number":"4242424242424242"}}`)
	var card token
	if status != 201 || json.Unmarshal(body, &card) != nil || card.ID == "" || card.Type != "card" {
		t.Fatalf("POST /tokenize a card: %d %s, want 201 and a card token", status, body)
	}
	for _, id := range []string{ids["a"], card.ID} {
		status, body = do(t, "GET", srv.URL+"/tokens/"+id, "", "")
		var got token
		if status != 200 || json.Unmarshal(body, &got) != nil || got.ID != id {
			t.Errorf("GET /tokens/%s: %d %s, want 200 and the token", id, status, body)
		}
	}
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/tokens/" + newID(), ""},
		{"POST", "/tokenize", `{}`},
		{"POST", "/tokenize", `[1]`},
		{"POST", "/health", ""},
	} {
		if status, body := do(t, tc.method, srv.URL+tc.path, "", tc.body); status < 400 {
			t.Errorf("%s %s %s: %d %s, want an error", tc.method, tc.path, tc.body, status, body)
		}
	}
}

// storedBytes is the size of every key and value in st, once its appended
// entries are folded.
func storedBytes(t *testing.T, st *bolt.Store) int {
	t.Helper()
	if err := st.Fold(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := st.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, v []byte) error {
			n += len(k) + len(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// vaultServer serves a Vault on st over HTTP and returns its URL, the key
// of a private application that creates and reads tokens, and a function
// that has the Vault chain the audit lines its reads appended (listing
// the log does), which it otherwise does a fraction of a second later.
func vaultServer(t *testing.T, st *bolt.Store) (string, string, func()) {
	t.Helper()
	ctx := context.Background()
	master := make([]byte, 32)
	rand.Read(master)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: st, Keys: tokenvault.KeyOptions{MasterKey: master}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "bench", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(v, httpapi.Options{}))
	t.Cleanup(srv.Close)
	settle := func() {
		t.Helper()
		// What the Vault does beside the calls, done now: the linker
		// links the audit lines (verifying links first), and the kept
		// counts' delta rows are folded (Sweep), so that both stores
		// hold what they hold in a steady state.
		if _, err := v.VerifyAuditChain(ctx, boot.Tenant.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	settle() // the one-time writes of a first link and sweep
	return srv.URL, string(app.Key), settle
}

// TestWritesMatchTheVault loads a vault and the bound with the same
// requests (loadgen's four kinds) and compares the bytes each stores for
// them: the bound must store no more than the vault, or it would not be a
// bound, and at least nine tenths of it, or it would be a loose one. A
// change to what the vault stores fails here until the sizes in handler.go
// follow it.
func TestWritesMatchTheVault(t *testing.T) {
	vaultStore, boundStore := openStore(t), openStore(t)
	vaultURL, key, settle := vaultServer(t, vaultStore)
	bound := httptest.NewServer(newHandler(boundStore))
	defer bound.Close()

	const n = 50
	batch := map[string]string{}
	for i := range n {
		batch[fmt.Sprint("v", i)] = fmt.Sprint("batch-value-", i)
	}
	batchBody, _ := json.Marshal(batch)
	var vaultIDs, boundIDs []string
	phases := []struct {
		name string
		run  func(url, key string, ids *[]string)
	}{
		{"single values", func(url, key string, ids *[]string) {
			for i := range n {
				status, body := do(t, "POST", url+"/tokenize", key, fmt.Sprintf(`{"v":"single-value-%d"}`, i))
				var out map[string]string
				if status != 201 || json.Unmarshal(body, &out) != nil {
					t.Fatalf("%s: %d %s", url, status, body)
				}
				*ids = append(*ids, out["v"])
			}
		}},
		{"cards", func(url, key string, _ *[]string) {
			for i := range n {
				body := fmt.Sprintf(`{"type":"card","data":{"number":%q,"expiration_month":12,"expiration_year":2040,"cvc":"123"}}`, cardNumber(i))
				if status, out := do(t, "POST", url+"/tokenize", key, body); status != 201 {
					t.Fatalf("%s: %d %s", url, status, out)
				}
			}
		}},
		{"a batch", func(url, key string, _ *[]string) {
			if status, out := do(t, "POST", url+"/tokenize", key, string(batchBody)); status != 201 {
				t.Fatalf("%s: %d %s", url, status, out)
			}
		}},
		{"gets", func(url, key string, ids *[]string) {
			for _, id := range *ids {
				if status, out := do(t, "GET", url+"/tokens/"+id, key, ""); status != 200 {
					t.Fatalf("%s: %d %s", url, status, out)
				}
			}
		}},
	}
	for _, p := range phases {
		v0, b0 := storedBytes(t, vaultStore), storedBytes(t, boundStore)
		p.run(vaultURL, key, &vaultIDs)
		p.run(bound.URL, "", &boundIDs)
		settle()
		v, b := storedBytes(t, vaultStore)-v0, storedBytes(t, boundStore)-b0
		t.Logf("%s: the vault stored %d bytes, the bound %d", p.name, v, b)
		if b > v || 10*b < 9*v {
			t.Errorf("%s: the vault stored %d bytes, the bound %d: want the bound within a tenth below the vault", p.name, v, b)
		}
	}
}

// cardNumber is a 16-digit number that passes the Luhn check, unique for i.
func cardNumber(i int) string {
	digits := fmt.Sprintf("400000000%06d", i)
	sum := 0
	for j := len(digits) - 1; j >= 0; j-- {
		d := int(digits[j] - '0')
		if (len(digits)-j)%2 == 1 { // every second digit from the check digit, which follows
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return digits + string(rune('0'+(10-sum%10)%10))
}
