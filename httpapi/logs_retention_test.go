package httpapi_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestLogRetentionOverHTTP: once the sweeper has run past the retention,
// GET /logs no longer shows the old lines.
func TestLogRetentionOverHTTP(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) {
		o.Retention.Logs = 30 * 24 * time.Hour
		o.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() }
	})
	count := func() int {
		var page tokenvault.Page[tokenvault.Log]
		r := s.do(t, "GET", "/logs", s.mgmt, nil)
		wantStatus(t, "GET /logs", r, 200)
		r.json(t, &page)
		return page.Pagination.TotalItems
	}
	if count() == 0 {
		t.Fatal("no log lines after the bootstrap")
	}
	now.Add(int64(31 * 24 * time.Hour))
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "new", "type": "private", "permissions": []string{"token:read"}})
	if _, err := s.v.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Errorf("GET /logs after the sweep: %d lines, want the 1 written within the retention", n)
	}
}

// TestLogRetentionLeavesAVerifiableChainOverHTTP: after the sweeper pruned
// the old lines and the operator signed the head, POST
// /operator/tenants/{id}/audit/verify finds the chain left whole, starting
// after the old lines, anchored by the checkpoint pruning signed there
// (a start no valid checkpoint vouched for would be a problem).
func TestLogRetentionLeavesAVerifiableChainOverHTTP(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey}, func(o *tokenvault.Options) {
		o.Retention.Logs = 30 * 24 * time.Hour
		o.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() }
	})
	for _, name := range []string{"a", "b", "c"} {
		wantStatus(t, "POST /applications", s.do(t, "POST", "/applications", s.mgmt, map[string]any{
			"name": "old-" + name, "type": "private", "permissions": []string{"token:read"}}), 201)
	}
	now.Add(int64(31 * 24 * time.Hour))
	wantStatus(t, "POST /applications", s.do(t, "POST", "/applications", s.mgmt, map[string]any{"name": "new", "type": "private", "permissions": []string{"token:read"}}), 201)
	n, err := s.v.Sweep(context.Background())
	if err != nil || n == 0 {
		t.Fatalf("Sweep = %d, %v; want old lines pruned", n, err)
	}
	path := "/operator/tenants/" + s.boot.Tenant.ID + "/audit/"
	wantStatus(t, "POST .../audit/checkpoints", s.do(t, "POST", path+"checkpoints", operatorKey, nil), 200)
	r := s.do(t, "POST", path+"verify", operatorKey, nil)
	wantStatus(t, "POST .../audit/verify", r, 200)
	var rep auditchain.Report
	r.json(t, &rep)
	if !rep.OK || len(rep.Problems) > 0 || rep.FirstSeq != uint64(n)+1 || rep.Lines != 1 || rep.Checkpoints < 2 {
		t.Errorf("verify after pruning %d lines: %+v; want the one line left, from %d, anchored and signed, no problem", n, rep, n+1)
	}
}
