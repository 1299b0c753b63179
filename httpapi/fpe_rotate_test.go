package httpapi_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/httpapi"
)

// TestRotateFPEKeyOverHTTP: POST /tenants/self/rotate-fpe-key answers
// the new version (403 without tenant:update); encode answers the version
// it used, and after the rotation another result; decode takes the
// version that encoded (default: the current one), and a version the
// tenant never had is a 400 at key_version; the rotation is in the logs.
func TestRotateFPEKeyOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, key := s.app(t, map[string]any{"name": "fpe", "type": "private", "permissions": []string{"fpe:encode", "fpe:decode"}})
	type result struct {
		Values     []string `json:"values"`
		KeyVersion int      `json:"key_version"`
	}
	values := []string{"4242 4242 4242 4242"}
	call := func(path string, req map[string]any, status int) result {
		t.Helper()
		r := s.do(t, "POST", path, key, req)
		wantStatus(t, path, r, status)
		var out result
		if status == 200 {
			r.json(t, &out)
		}
		return out
	}
	before := call("/fpe/encode", map[string]any{"transformation": "card_bin_last4", "values": values}, 200)
	if before.KeyVersion != 1 {
		t.Fatalf("encode before any rotation: key_version %d, want 1", before.KeyVersion)
	}

	wantStatus(t, "rotate-fpe-key without tenant:update", s.do(t, "POST", "/tenants/self/rotate-fpe-key", key, nil), 403)
	r := s.do(t, "POST", "/tenants/self/rotate-fpe-key", s.mgmt, nil)
	wantStatus(t, "rotate-fpe-key", r, 200)
	var rotated struct {
		KeyVersion int `json:"key_version"`
	}
	r.json(t, &rotated)
	if rotated.KeyVersion != 2 {
		t.Fatalf("rotate-fpe-key = %s, want key_version 2", r.body)
	}

	after := call("/fpe/encode", map[string]any{"transformation": "card_bin_last4", "values": values}, 200)
	if after.KeyVersion != 2 || slices.Equal(after.Values, before.Values) {
		t.Errorf("encode after the rotation = %+v; before %+v", after, before)
	}
	if got := call("/fpe/decode", map[string]any{"transformation": "card_bin_last4", "key_version": 1, "values": before.Values}, 200); !slices.Equal(got.Values, values) || got.KeyVersion != 1 {
		t.Errorf("decode of a version 1 encoding with key_version 1 = %+v, want %q", got, values)
	}
	if got := call("/fpe/decode", map[string]any{"transformation": "card_bin_last4", "values": after.Values}, 200); !slices.Equal(got.Values, values) || got.KeyVersion != 2 {
		t.Errorf("decode of a version 2 encoding = %+v, want %q", got, values)
	}
	r = s.do(t, "POST", "/fpe/decode", key, map[string]any{"transformation": "card_bin_last4", "key_version": 7, "values": after.Values})
	wantStatus(t, "decode with key_version 7", r, 400)
	if p := r.problem(t); len(p.Errors["key_version"]) == 0 {
		t.Errorf("decode with key_version 7: %s, want an error at key_version", r.body)
	}
	r = s.do(t, "POST", "/fpe/encode", key, map[string]any{"transformation": "card_bin_last4", "key_version": 1, "values": values})
	wantStatus(t, "encode with key_version 1", r, 400)

	r = s.do(t, "GET", "/logs?entity_type=tenant", s.mgmt, nil)
	wantStatus(t, "logs", r, 200)
	if !strings.Contains(string(r.body), "FPE key rotated to version 2") {
		t.Errorf("no audit line of the rotation: %s", r.body)
	}
}
