package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestSubjectsOverHTTP: a token carries its subject; a search finds it
// by subject:; the report shows it; DELETE /subjects/{id} answers the
// signed certificate, GET .../certificate the same, and the token is
// gone; a token whose subject key is gone (a copy of the data store from
// before an erasure) is 410 Gone, problem+json; a subject the tenant
// holds nothing of is 404.
func TestSubjectsOverHTTP(t *testing.T) {
	t.Parallel()
	keys := memory.New()
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.SubjectKeys = keys })
	_, rw := s.app(t, map[string]any{"name": "rw", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:read", "token:search"}}}})

	// A copy of the data from before an erasure: the key is gone.
	other := s.do(t, "POST", "/tokens", rw, map[string]any{"type": "token", "data": "bo's", "subject": "bo-2"})
	var boTok tokenvault.Token
	other.json(t, &boTok)
	if err := keys.Update(context.Background(), func(tx store.Tx) error {
		var doomed [][]byte
		err := tx.Scan([]byte("subject-"), nil, 0, func(k, _ []byte) error {
			doomed = append(doomed, append([]byte(nil), k...))
			return nil
		})
		for _, k := range doomed {
			if err == nil {
				err = tx.Delete(k)
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r := s.do(t, "GET", "/tokens/"+boTok.ID, rw, nil)
	if r.status != http.StatusGone || !strings.Contains(r.problem(t).Detail, "erased") {
		t.Errorf("GET a token whose subject key is gone = %d %s; want 410 erased", r.status, r.body)
	}

	r = s.do(t, "POST", "/tokens", rw, map[string]any{"type": "token", "data": "ada's", "subject": "ada-1"})
	if r.status != http.StatusCreated && r.status != http.StatusOK {
		t.Fatalf("POST /tokens with a subject = %d %s", r.status, r.body)
	}
	var tok tokenvault.Token
	r.json(t, &tok)
	if tok.Subject != "ada-1" {
		t.Fatalf("POST /tokens answered subject %q", tok.Subject)
	}
	if r := s.do(t, "POST", "/tokens", rw, map[string]any{"type": "token", "data": "x", "subject": "a/b"}); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "subject") {
		t.Errorf("POST /tokens with a bad subject = %d %s", r.status, r.body)
	}
	r = s.do(t, "POST", "/tokens/search", rw, map[string]any{"query": "subject:ada-1"})
	if r.status != http.StatusOK || !strings.Contains(string(r.body), tok.ID) {
		t.Errorf("search subject:ada-1 = %d %s", r.status, r.body)
	}
	r = s.do(t, "GET", "/subjects/ada-1/report", rw, nil)
	var report tokenvault.SubjectReport
	if r.status != http.StatusOK {
		t.Fatalf("GET /subjects/ada-1/report = %d %s", r.status, r.body)
	}
	r.json(t, &report)
	if len(report.Tokens) != 1 || report.Tokens[0].Data != "ada's" || report.Accesses != nil {
		t.Errorf("report = %+v; want the token revealed, no accesses without token:access:read", report)
	}
	r = s.do(t, "GET", "/subjects/ada-1/report", s.mgmt, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /subjects/ada-1/report (management) = %d %s", r.status, r.body)
	}
	report = tokenvault.SubjectReport{}
	r.json(t, &report)
	if len(report.Tokens) != 1 || report.Tokens[0].Data != nil || len(report.Accesses) == 0 {
		t.Errorf("report (management) = %+v; want the token without data, and its accesses", report)
	}

	r = s.do(t, "DELETE", "/subjects/ada-1", s.mgmt, nil)
	if r.status != http.StatusOK {
		t.Fatalf("DELETE /subjects/ada-1 = %d %s", r.status, r.body)
	}
	var cert auditchain.ErasureCertificate
	r.json(t, &cert)
	pubs, err := s.v.AuditKeys(context.Background())
	if err != nil || auditchain.VerifyCertificate(&cert, pubs) != nil || cert.Tokens != 1 {
		t.Errorf("DELETE /subjects/ada-1 answered %+v, which does not verify (%v)", cert, err)
	}
	r = s.do(t, "GET", "/subjects/ada-1/certificate", s.mgmt, nil)
	var again auditchain.ErasureCertificate
	r.json(t, &again)
	if r.status != http.StatusOK || again.Hash() != cert.Hash() {
		t.Errorf("GET /subjects/ada-1/certificate = %d %s", r.status, r.body)
	}
	if r := s.do(t, "GET", "/tokens/"+tok.ID, rw, nil); r.status != http.StatusNotFound {
		t.Errorf("GET the erased token = %d %s", r.status, r.body)
	}
	if r := s.do(t, "DELETE", "/subjects/nobody-9", s.mgmt, nil); r.status != http.StatusNotFound {
		t.Errorf("DELETE /subjects/nobody-9 = %d %s", r.status, r.body)
	}
	if r := s.do(t, "DELETE", "/subjects/ada-1", rw, nil); r.status != http.StatusForbidden {
		t.Errorf("DELETE /subjects/ada-1 with a private key = %d %s", r.status, r.body)
	}
}
