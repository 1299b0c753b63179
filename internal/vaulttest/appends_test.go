package vaulttest_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

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
	s, _ := vaulttest.OpenCountingAppender(t)
	e := vaulttest.NewEnvOn(t, s)
	logReader := e.App(t, tokenvault.Management, "log:read")
	reader, tok := e.SecretToken(t)
	if n := s.Appends.Load(); n != 0 {
		t.Fatalf("a create appended %d times: it commits its writes", n)
	}
	if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
		t.Fatal(err)
	}
	if n := s.Appends.Load(); n != 1 {
		t.Fatalf("after a read in process, %d appends, want 1", n)
	}
	byEntity := tokenvault.ListLogsRequest{EntityType: "token", EntityID: tok.ID}
	logs, err := e.V.ListLogs(ctx, logReader.Key, byEntity)
	if err != nil {
		t.Fatal(err)
	}
	vaulttest.WantOps(t, "in process, by entity", logOps(t, logs), "read", "create")

	srv := httptest.NewServer(httpapi.New(e.V, httpapi.Options{}))
	defer srv.Close()
	c := client.New(srv.URL, nil)
	got, err := c.GetToken(ctx, reader.Key, tok.ID)
	if err != nil || got.Data != "secret" {
		t.Fatalf("GET /tokens/{id} = %+v, %v", got, err)
	}
	if n := s.Appends.Load(); n != 2 {
		t.Fatalf("after a read over HTTP, %d appends, want 2", n)
	}
	logs, err = c.ListLogs(ctx, logReader.Key, byEntity)
	if err != nil {
		t.Fatal(err)
	}
	vaulttest.WantOps(t, "over HTTP, by entity", logOps(t, logs), "read", "read", "create")
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
	s, _ := vaulttest.OpenCountingAppender(t)
	e := vaulttest.NewEnvOn(t, s)
	reader, tok := e.SecretToken(t)
	if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
		t.Fatal(err)
	}
	fresh, err := e.V.RegenerateApplicationKey(ctx, e.Mgmt, reader.ID)
	if err != nil {
		t.Fatal(err)
	}
	before := s.Appends.Load()
	_, err = e.V.GetToken(ctx, reader.Key, tok.ID)
	vaulttest.WantKind(t, "GetToken with the regenerated key", err, tokenvault.Unauthenticated)
	if n := s.Appends.Load(); n != before {
		t.Fatalf("a refused read appended")
	}
	if _, err := e.V.GetToken(ctx, fresh.Key, tok.ID); err != nil {
		t.Fatal(err)
	}
	if n := s.Appends.Load(); n != before+1 {
		t.Fatalf("the new key's read: %d appends, want %d", n, before+1)
	}
}

// TestDeleteTenantLeavesNoAppendedLine: the lines a tenant's reads
// appended, not yet folded, are deleted with the tenant: nothing of it is
// in the store afterwards, not even once the store folds at Close.
func TestDeleteTenantLeavesNoAppendedLine(t *testing.T) {
	s, path := vaulttest.OpenCountingAppender(t)
	e := vaulttest.NewEnvOn(t, s)
	reader, tok := e.SecretToken(t)
	for range 20 {
		if _, err := e.V.GetToken(ctx, reader.Key, tok.ID); err != nil {
			t.Fatal(err)
		}
	}
	if s.Appends.Load() == 0 {
		t.Fatal("no read appended")
	}
	tid := e.Boot.Tenant.ID
	if err := e.V.DeleteTenant(ctx, tid); err != nil {
		t.Fatal(err)
	}
	e.V.Close()
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
