package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// TestVerifyAuditChainOverHTTP verifies a chain through
// POST /operator/tenants/{id}/audit/verify and the client, before and
// after a byte of one of its lines is flipped in the bbolt store below the
// vault: the report names that line's sequence number. Unknown tenants
// are 404, tenant keys 401.
func TestVerifyAuditChainOverHTTP(t *testing.T) {
	ctx := context.Background()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey}, func(o *tokenvault.Options) { o.Store = st })
	tid := s.boot.Tenant.ID
	path := "/operator/tenants/" + tid + "/audit/verify"
	c := client.New(s.srv.URL+"/vault", nil)

	r := s.do(t, "POST", path, operatorKey, nil)
	wantStatus(t, "POST "+path, r, http.StatusOK)
	var before auditchain.Report
	r.json(t, &before)
	if before.TenantID != tid || before.Lines == 0 || len(before.Problems) != 1 || before.Problems[0].Kind != auditchain.UnsignedTail {
		t.Fatalf("untouched chain: %+v", before)
	}

	// Flip a byte of line 2, found by its sequence index entry.
	prefix := "tenant/" + tid + "/idx/chain-seq/"
	var lineKey string
	err = st.View(ctx, func(tx store.Tx) error {
		return tx.Scan([]byte(prefix+"0000000000000002/"), nil, 1, func(k, _ []byte) error {
			lineKey = "tenant/" + tid + "/log/" + strings.TrimPrefix(string(k), prefix+"0000000000000002/")
			return nil
		})
	})
	if err != nil || lineKey == "" {
		t.Fatalf("line 2: %q %v", lineKey, err)
	}
	err = st.Update(ctx, func(tx store.Tx) error {
		v, err := tx.Get([]byte(lineKey))
		if err != nil {
			return err
		}
		v = append([]byte(nil), v...)
		v[len(v)-3] ^= 4
		return tx.Put([]byte(lineKey), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.VerifyAuditChain(ctx, operatorKey, tid)
	if err != nil {
		t.Fatal(err)
	}
	// The problems: line 2 altered, and the unsigned tail (no checkpoint).
	if got.OK || len(got.Problems) != 2 || got.Problems[1].Kind != auditchain.Altered || got.Problems[1].Seq != 2 ||
		got.Problems[1].LineID != lineKey[strings.LastIndexByte(lineKey, '/')+1:] {
		t.Errorf("after altering line 2: %+v", got)
	}

	r = s.do(t, "POST", "/operator/tenants/01b8e094-0000-7000-8000-000000000000/audit/verify", operatorKey, nil)
	wantStatus(t, "unknown tenant", r, http.StatusNotFound)
	r.problem(t)
	if _, err := c.VerifyAuditChain(ctx, operatorKey, "nope"); !errors.Is(err, tokenvault.ErrNotFound) {
		t.Errorf("client, unknown tenant: %v", err)
	}
	r = s.do(t, "POST", path, s.mgmt, nil)
	wantStatus(t, "a tenant key", r, http.StatusUnauthorized)
	if _, err := c.VerifyAuditChain(ctx, tokenvault.Credential(s.mgmt), tid); !errors.Is(err, tokenvault.ErrUnauthenticated) {
		t.Errorf("client, a tenant key: %v", err)
	}
}
