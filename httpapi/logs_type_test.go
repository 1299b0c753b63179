package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// TestTypeLogPagesReadWhatTheyReturnOverHTTP: with 10,000 lines of mixed
// types (an older batch with 1,250 banks among tokens, a newer one with
// 500 cards among tokens), GET /logs?entity_type= reads from the store a
// small multiple of its size and of the budget of 1,000 lines, not the
// type's lines: tokens fill their page from what they read; banks, 5,000
// lines back, first get an empty page whose after continues the walk, and
// a walk by cursor lists each bank once, newest first; a date range with
// the type and a rare type (the tenant's one line) answer exactly.
func TestTypeLogPagesReadWhatTheyReturnOverHTTP(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	clock := testfake.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Store, o.Now = cs, clock.Now })
	var app tokenvault.Application
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "backend", "type": "private", "permissions": []string{"token:create"},
	}).json(t, &app)
	const n, budget = 5_000, 1_000
	var middle string // a time between the two batches
	for batch := range 2 {
		body := make([]any, n)
		for i := range body {
			switch {
			case batch == 0 && i%4 == 0:
				body[i] = map[string]any{"type": "bank", "data": map[string]any{
					"routing_number": "021000021", "account_number": fmt.Sprintf("%08d", i)}}
			case batch == 1 && i%10 == 0:
				body[i] = map[string]any{"type": "card", "data": map[string]any{
					"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}}
			default:
				body[i] = fmt.Sprint("value ", batch, i)
			}
		}
		if _, err := s.v.Tokenize(context.Background(), app.Key, body); err != nil {
			t.Fatal(err)
		}
		if batch == 0 {
			clock.Advance(time.Minute)
			middle = clock.Now().Format(time.RFC3339Nano)
			clock.Advance(time.Minute)
		}
	}
	// get returns the page at path, failing when it reads more than a
	// small multiple of read entries (as the in-process tests).
	get := func(path string, read int) tokenvault.Page[tokenvault.Log] {
		t.Helper()
		s.settleChain(t)
		r, reads := s.countedDo(t, "GET", path, s.mgmt, nil)
		wantStatus(t, "GET "+path, r, 200)
		if bound := int64(3*read + 40); reads > bound {
			t.Errorf("GET %s read %d entries, bound %d", path, reads, bound)
		}
		var page tokenvault.Page[tokenvault.Log]
		r.json(t, &page)
		return page
	}

	first := get("/logs?size=20&entity_type=token", 2*20)
	if len(first.Data) != 20 || first.Data[0].EntityType != "token" || first.Pagination.After == "" || first.Pagination.TotalItems != 21 {
		t.Fatalf("first page of tokens: %d lines, %+v", len(first.Data), first.Pagination)
	}
	next := get("/logs?size=20&entity_type=token&start="+url.QueryEscape(first.Pagination.After), 2*20)
	if len(next.Data) != 20 || next.Data[0].EntityType != "token" || next.Data[0].ID == first.Data[19].ID ||
		next.Data[0].CreatedAt.After(first.Data[19].CreatedAt) {
		t.Errorf("next page of tokens: %d lines, %+v", len(next.Data), next.Pagination)
	}

	banks := get("/logs?size=20&entity_type=bank", 20+budget)
	if len(banks.Data) != 0 || banks.Pagination.After == "" {
		t.Errorf("first page of banks: %d lines, %+v; want an empty page that continues", len(banks.Data), banks.Pagination)
	}
	seen := map[string]bool{}
	var last time.Time
	path := "/logs?size=100&entity_type=bank"
	for pages := 0; ; pages++ {
		if pages > 2*n/budget+n/4/100+2 {
			t.Fatalf("the walk of the banks took more than %d pages", pages)
		}
		p := get(path, 100+budget)
		for _, l := range p.Data {
			if l.EntityType != "bank" || seen[l.ID] || !last.IsZero() && l.CreatedAt.After(last) {
				t.Fatalf("line %s (%s at %v): not a bank, seen twice, or out of order", l.ID, l.EntityType, l.CreatedAt)
			}
			seen[l.ID], last = true, l.CreatedAt
		}
		if p.Pagination.After == "" {
			break
		}
		path = "/logs?size=100&entity_type=bank&start=" + url.QueryEscape(p.Pagination.After)
	}
	if len(seen) != n/4 {
		t.Errorf("the walk of the banks saw %d lines, want %d", len(seen), n/4)
	}

	// The banks before the middle: where they are, a full page at once.
	before := get("/logs?size=20&entity_type=bank&end_date="+url.QueryEscape(middle), 2*20*4)
	if len(before.Data) != 20 || before.Data[0].EntityType != "bank" || before.Pagination.After == "" {
		t.Errorf("the banks before %s: %d lines, %+v", middle, len(before.Data), before.Pagination)
	}
	// No card before the middle: the range's walk reaches the log's start.
	if p := get("/logs?size=20&entity_type=card&end_date="+url.QueryEscape(middle), 20+budget); len(p.Data) != 0 ||
		p.Pagination.After != "" || p.Pagination.TotalItems != 0 {
		t.Errorf("cards before %s: %d lines, %+v", middle, len(p.Data), p.Pagination)
	}
	// A rare type, at once and exactly (from its index).
	if p := get("/logs?size=20&entity_type=tenant", 2*20); len(p.Data) != 1 || p.Pagination.After != "" || p.Pagination.TotalItems != 1 {
		t.Errorf("the tenant's lines: %d, %+v", len(p.Data), p.Pagination)
	}

	r := s.do(t, "GET", "/logs?size=100&page=102&entity_type=token", s.mgmt, nil)
	wantStatus(t, "GET /logs?page=102&entity_type=token", r, 400)
	if p := r.problem(t); p.Errors["page"] == nil {
		t.Errorf("problem %+v does not name page", p)
	}
}
