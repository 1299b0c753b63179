package tokenvault_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// countingAppender is a bbolt store that counts its Appends.
type countingAppender struct {
	*bolt.Store
	appends atomic.Int64
}

func (c *countingAppender) Append(ctx context.Context, entries []store.Entry) error {
	c.appends.Add(1)
	return c.Store.Append(ctx, entries)
}

func openCountingAppender(t *testing.T) (*countingAppender, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vault.db")
	s, err := bolt.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &countingAppender{Store: s}, path
}

// secretToken creates an application that creates and reveals tokens,
// and a token holding "secret" with it.
func (e *env) secretToken(t *testing.T) (*tokenvault.Application, *tokenvault.Token) {
	t.Helper()
	reader := e.reader(t, "reveal", "token:create", "token:read")
	tok, err := e.v.CreateToken(ctx, reader.Key, tokenvault.TokenRequest{Type: "token", Data: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	return reader, tok
}

func logOps(t *testing.T, logs *tokenvault.Page[tokenvault.Log]) []string {
	t.Helper()
	var ops []string
	for _, l := range logs.Data {
		ops = append(ops, string(l.Operation))
	}
	return ops
}

// TestReadsAppendTheirLines: on a store that appends, a read (in process
// and over HTTP) appends its audit line instead of committing it, a write
// does not, and the line is listed at once, by entity too.
func TestReadsAppendTheirLines(t *testing.T) {
	s, _ := openCountingAppender(t)
	e := newEnvOn(t, s)
	logReader := e.app(t, tokenvault.Management, "log:read")
	reader, tok := e.secretToken(t)
	if n := s.appends.Load(); n != 0 {
		t.Fatalf("a create appended %d times: it commits its writes", n)
	}
	if _, err := e.v.GetToken(ctx, reader.Key, tok.ID); err != nil {
		t.Fatal(err)
	}
	if n := s.appends.Load(); n != 1 {
		t.Fatalf("after a read in process, %d appends, want 1", n)
	}
	byEntity := tokenvault.ListLogsRequest{EntityType: "token", EntityID: tok.ID}
	logs, err := e.v.ListLogs(ctx, logReader.Key, byEntity)
	if err != nil {
		t.Fatal(err)
	}
	wantOps(t, "in process, by entity", logOps(t, logs), "read", "create")

	srv := httptest.NewServer(httpapi.New(e.v, httpapi.Options{}))
	defer srv.Close()
	c := client.New(srv.URL, nil)
	got, err := c.GetToken(ctx, reader.Key, tok.ID)
	if err != nil || got.Data != "secret" {
		t.Fatalf("GET /tokens/{id} = %+v, %v", got, err)
	}
	if n := s.appends.Load(); n != 2 {
		t.Fatalf("after a read over HTTP, %d appends, want 2", n)
	}
	logs, err = c.ListLogs(ctx, logReader.Key, byEntity)
	if err != nil {
		t.Fatal(err)
	}
	wantOps(t, "over HTTP, by entity", logOps(t, logs), "read", "read", "create")
	logs, err = c.ListLogs(ctx, logReader.Key, tokenvault.ListLogsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if ops := logOps(t, logs); len(ops) < 2 || ops[0] != "read" || ops[1] != "read" {
		t.Fatalf("over HTTP, all lines: %v, want the two reads first", ops)
	}

	// A key that cannot read logs does not get them, and makes nothing fold.
	if _, err := c.ListLogs(ctx, reader.Key, tokenvault.ListLogsRequest{}); tokenvault.ErrorKind(err) != tokenvault.PermissionDenied {
		t.Fatalf("ListLogs without log:read = %v, want PermissionDenied", err)
	}
}

// TestAppendsAfterAuthChange: once a key is regenerated, the old key's
// reads are refused (they do not append), the new key's read appends.
func TestAppendsAfterAuthChange(t *testing.T) {
	s, _ := openCountingAppender(t)
	e := newEnvOn(t, s)
	reader, tok := e.secretToken(t)
	if _, err := e.v.GetToken(ctx, reader.Key, tok.ID); err != nil {
		t.Fatal(err)
	}
	fresh, err := e.v.RegenerateApplicationKey(ctx, e.mgmt, reader.ID)
	if err != nil {
		t.Fatal(err)
	}
	before := s.appends.Load()
	_, err = e.v.GetToken(ctx, reader.Key, tok.ID)
	wantKind(t, "GetToken with the regenerated key", err, tokenvault.Unauthenticated)
	if n := s.appends.Load(); n != before {
		t.Fatalf("a refused read appended")
	}
	if _, err := e.v.GetToken(ctx, fresh.Key, tok.ID); err != nil {
		t.Fatal(err)
	}
	if n := s.appends.Load(); n != before+1 {
		t.Fatalf("the new key's read: %d appends, want %d", n, before+1)
	}
}

// TestDeleteTenantLeavesNoAppendedLine: the lines a tenant's reads
// appended, not yet folded, are deleted with the tenant: nothing of it is
// in the store afterwards, not even once the store folds at Close.
func TestDeleteTenantLeavesNoAppendedLine(t *testing.T) {
	s, path := openCountingAppender(t)
	e := newEnvOn(t, s)
	reader, tok := e.secretToken(t)
	for range 20 {
		if _, err := e.v.GetToken(ctx, reader.Key, tok.ID); err != nil {
			t.Fatal(err)
		}
	}
	if s.appends.Load() == 0 {
		t.Fatal("no read appended")
	}
	tid := e.boot.Tenant.ID
	if err := e.v.DeleteTenant(ctx, tid); err != nil {
		t.Fatal(err)
	}
	e.v.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := bolt.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	var left []string
	err = reopened.View(ctx, func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, _ []byte) error {
			// Its final audit checkpoint outlives it (checkpoints.go).
			if strings.Contains(string(k), tid) && string(k) != "sys/chain-final/"+tid {
				left = append(left, string(k))
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("after DeleteTenant, %d keys of the tenant are left, the first %q", len(left), left[0])
	}
}
