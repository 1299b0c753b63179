package httpapi_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
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
