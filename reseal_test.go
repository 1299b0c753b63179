package tokenvault_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/seal"
)

// TestResealAfterDataKeyRotation: after RotateDataKey, Reseal seals every
// record of the tenant (over several batches) with the new term, leaves
// other tenants alone, changes no value, logs it once, and then has
// nothing left to do.
func TestResealAfterDataKeyRotation(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		other := e.tenant(t, "Other")
		app := e.reader(t, "reveal", "token:create", "token:read")
		body := map[string]any{}
		for i := range 300 {
			body[fmt.Sprint("k", i)] = fmt.Sprint("value ", i)
		}
		out, err := e.v.Tokenize(ctx, app.Key, body)
		if err != nil {
			t.Fatal(err)
		}
		ids := out.(map[string]any)

		// terms counts the sealed entries of a tenant by term.
		terms := func(tid string) map[uint32]int {
			t.Helper()
			n := map[uint32]int{}
			for k, v := range dump(t, e.store) {
				if !strings.HasPrefix(k, "tenant/"+tid+"/") || strings.HasSuffix(k, "/keyring") || len(v) == 0 {
					continue
				}
				term, ok := seal.Term(v)
				if !ok {
					t.Fatalf("%s holds %d bytes that are not sealed", k, len(v))
				}
				n[term]++
			}
			return n
		}
		tid := e.boot.Tenant.ID
		before := terms(tid)
		if len(before) != 1 || before[1] < 600 {
			t.Fatalf("before rotating: terms %v, want only term 1 on 600 entries or more (several batches)", before)
		}
		otherBefore := terms(other.Tenant.ID)

		if err := e.v.RotateDataKey(ctx, e.mgmt); err != nil {
			t.Fatal(err)
		}
		stale := terms(tid)[1] // the rotation's own log line included
		n, err := e.v.Reseal(ctx)
		if err != nil {
			t.Fatalf("Reseal: %v", err)
		}
		after := terms(tid)
		if len(after) != 1 || after[2] == 0 {
			t.Errorf("after Reseal: terms %v, want every entry on term 2", after)
		}
		if n != stale {
			t.Errorf("Reseal = %d, want the %d entries sealed with term 1", n, stale)
		}
		if got := terms(other.Tenant.ID); fmt.Sprint(got) != fmt.Sprint(otherBefore) {
			t.Errorf("the other tenant's terms went from %v to %v", otherBefore, got)
		}
		if n, err := e.v.Reseal(ctx); n != 0 || err != nil {
			t.Errorf("Reseal again = %d, %v; want nothing to do", n, err)
		}

		for _, k := range []string{"k0", "k299"} {
			tok, err := e.v.GetToken(ctx, app.Key, ids[k].(string))
			if err != nil || tok.Data != body[k] {
				t.Errorf("GetToken(%s) after re-sealing = %+v, %v", k, tok, err)
			}
		}
		logs, err := e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityTenant, EntityID: tid})
		if err != nil {
			t.Fatal(err)
		}
		resealed := 0
		for _, l := range logs.Data {
			if l.Message == "Records re-sealed with data key term 2" {
				resealed++
			}
		}
		if resealed != 1 {
			t.Errorf("%d re-seal log lines, want 1: %+v", resealed, logs.Data)
		}
	})
}
