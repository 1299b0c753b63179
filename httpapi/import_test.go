package httpapi_test

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestImportOverHTTP posts one NDJSON batch: good lines are created with
// their ids, bad ones come back with the caller's line numbers (from
// first_line) and reasons that never quote the data.
func TestImportOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	_, key := s.app(t, map[string]any{"name": "importer", "type": "private",
		"permissions": []string{"token:import", "token:create", "token:read"}})
	body := strings.Join([]string{
		`{"id": "cus_1_card", "type": "card", "data": {"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2035}, "created_at": "2020-01-02T03:04:05Z", "tenant_id": "x", "fingerprint": "y"}`,
		``,
		`{"id": "cus_2_card", "type": "card", "data": {"number": "4242424242424242"`,
		`{"id": "cus_3", "type": "token", "data": "5105105105105100", "colour": "red"}`,
		`{"id": "tok_5105105105105100", "type": "token", "data": "5105105105105100"}`,
	}, "\n")
	ndjson := []string{"Content-Type", "application/x-ndjson"}
	r := s.do(t, "POST", "/tokens/import?first_line=11", key, body, ndjson...)
	wantStatus(t, "POST /tokens/import", r, 200)
	var res tokenvault.ImportResult
	r.json(t, &res)
	want := []tokenvault.ImportReject{
		{Line: 13, Reason: "not valid JSON"},
		{Line: 14, Reason: `unknown field "colour"`},
		{Line: 15, Reason: "id: carries the data (see the import id rule)"},
	}
	if res.Imported != 1 || res.Rejected != 3 || len(res.Rejects) != 3 {
		t.Fatalf("POST /tokens/import = %s, want 1 imported, 3 rejected", r.body)
	}
	for i, w := range want {
		if res.Rejects[i].Line != w.Line || !strings.HasPrefix(res.Rejects[i].Reason, w.Reason) {
			t.Errorf("reject %d = %+v, want %+v", i, res.Rejects[i], w)
		}
	}
	if strings.Contains(string(r.body), "4242") || strings.Contains(string(r.body), "5105") {
		t.Errorf("POST /tokens/import answer %s quotes data", r.body)
	}
	r = s.do(t, "GET", "/tokens/cus_1_card", key, nil)
	wantStatus(t, "GET /tokens/cus_1_card", r, 200)
	var tok tokenvault.Token
	r.json(t, &tok)
	if tok.CreatedAt.Year() != 2020 || tok.TenantID == "x" {
		t.Errorf("imported token = %s, want created_at 2020 kept, its own tenant", r.body)
	}
	// The same batch again: the imported line is skipped.
	r = s.do(t, "POST", "/tokens/import", key, body, ndjson...)
	r.json(t, &res)
	if res.Skipped != 1 || res.Imported != 0 {
		t.Errorf("POST /tokens/import again = %s, want 1 skipped", r.body)
	}

	wantStatus(t, "POST /tokens/import as JSON", s.do(t, "POST", "/tokens/import", key, body), 415)
	wantStatus(t, "POST /tokens/import?first_line=0", s.do(t, "POST", "/tokens/import?first_line=0", key, body, ndjson...), 400)
	many := strings.Repeat(`{"id": "abc", "type": "token", "data": "x"}`+"\n", tokenvault.MaxImportBatch+1)
	wantStatus(t, "POST /tokens/import 1001 lines", s.do(t, "POST", "/tokens/import", key, many, ndjson...), 400)
	_, creator := s.app(t, map[string]any{"name": "creator", "type": "private", "permissions": []string{"token:create"}})
	wantStatus(t, "POST /tokens/import without token:import", s.do(t, "POST", "/tokens/import", creator, body, ndjson...), 403)
}
