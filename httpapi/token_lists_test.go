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

// TestTokenListPagesReadWhatTheyReturnOverHTTP: with 10,000 tokens in a
// tenant, GET /tokens?size=20, its next page by cursor, a type-filtered
// page (?type=card, a few matches; ?type=bank, none) and a search by type
// each read from the store a small multiple of what they return, and the
// page carries the tenant's count.
func TestTokenListPagesReadWhatTheyReturnOverHTTP(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Store = cs })
	var app tokenvault.Application
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "backend", "type": "private", "permissions": []string{"token:create", "token:read", "token:search"},
	}).json(t, &app)
	const n = 10_000
	body := make([]any, n)
	for i := range body {
		body[i] = fmt.Sprint("value ", i)
	}
	if _, err := s.v.Tokenize(context.Background(), app.Key, body); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r := s.do(t, "POST", "/tokens", string(app.Key), map[string]any{"type": "card", "data": map[string]any{
			"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2039}})
		wantStatus(t, "POST /tokens (card)", r, 201)
	}
	const bound = 3*20 + 40 // as the in-process test: entries, records, a few reads of keys and counts
	get := func(path string) tokenvault.Page[tokenvault.Token] {
		t.Helper()
		s.settleChain(t)
		r, reads := s.countedDo(t, "GET", path, string(app.Key), nil)
		wantStatus(t, "GET "+path, r, 200)
		if reads > bound {
			t.Errorf("GET %s read %d entries, bound %d", path, reads, bound)
		}
		var page tokenvault.Page[tokenvault.Token]
		r.json(t, &page)
		return page
	}
	first := get("/tokens?size=20")
	if len(first.Data) != 20 || first.Pagination.TotalItems != n+3 || first.Pagination.After == "" {
		t.Errorf("first page: %d tokens, %+v", len(first.Data), first.Pagination)
	}
	next := get("/tokens?size=20&start=" + url.QueryEscape(first.Pagination.After))
	if len(next.Data) != 20 || next.Data[0].ID == first.Data[19].ID {
		t.Errorf("next page: %d tokens, %+v", len(next.Data), next.Pagination)
	}
	if cards := get("/tokens?type=card"); len(cards.Data) != 3 || cards.Pagination.TotalItems != 3 {
		t.Errorf("?type=card: %d tokens, %+v", len(cards.Data), cards.Pagination)
	}
	if banks := get("/tokens?type=bank"); len(banks.Data) != 0 || banks.Pagination.TotalItems != 0 {
		t.Errorf("?type=bank: %d tokens, %+v", len(banks.Data), banks.Pagination)
	}
	s.settleChain(t)
	r, reads := s.countedDo(t, "POST", "/tokens/search", string(app.Key), map[string]any{"query": "type:card", "size": 2})
	wantStatus(t, "POST /tokens/search", r, 200)
	if reads > bound {
		t.Errorf("search type:card read %d entries, bound %d", reads, bound)
	}

	// Pages past the first 10,000 tokens are reached by cursor.
	r = s.do(t, "GET", "/tokens?size=100&page=102", string(app.Key), nil)
	wantStatus(t, "GET /tokens?page=102", r, 400)
	if p := r.problem(t); p.Errors["page"] == nil {
		t.Errorf("problem %+v does not name page", p)
	}
}

// TestTokenListContainerPagesOverHTTP: GET /tokens?container= lists the
// tokens at or below the container, among thousands elsewhere, by pages
// that read a small multiple of what they return; a token in two
// containers under the filtered one is listed and counted once, and the
// total is exact on the cursor page too.
func TestTokenListContainerPagesOverHTTP(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Store = cs })
	var app tokenvault.Application
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "backend", "type": "private", "permissions": []string{"token:create", "token:read"},
	}).json(t, &app)
	body := make([]any, 2_000)
	for i := range body {
		body[i] = fmt.Sprint("value ", i)
	}
	if _, err := s.v.Tokenize(context.Background(), app.Key, body); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, containers := range [][]string{{"/shop/eu/"}, {"/shop/eu/", "/shop/us/"}, {"/shop/us/"}, {"/shop/eu/berlin/"}, {"/shop/"}} {
		var tok tokenvault.Token
		r := s.do(t, "POST", "/tokens", string(app.Key), map[string]any{"type": "token", "data": "x", "containers": containers})
		wantStatus(t, "POST /tokens", r, 201)
		r.json(t, &tok)
		want[tok.ID] = true
	}
	s.do(t, "POST", "/tokens", string(app.Key), map[string]any{"type": "token", "data": "y", "containers": []string{"/shopping/"}})
	const bound = 3*2 + 40
	seen := map[string]bool{}
	path := "/tokens?container=" + url.QueryEscape("/shop/") + "&size=2"
	for pages := 0; path != ""; pages++ {
		r, reads := s.countedDo(t, "GET", path, string(app.Key), nil)
		wantStatus(t, "GET "+path, r, 200)
		if reads > bound {
			t.Errorf("GET %s read %d entries, bound %d", path, reads, bound)
		}
		var page tokenvault.Page[tokenvault.Token]
		r.json(t, &page)
		if page.Pagination.TotalItems != len(want) {
			t.Errorf("GET %s: total_items %d, want %d", path, page.Pagination.TotalItems, len(want))
		}
		for _, tok := range page.Data {
			if seen[tok.ID] || !want[tok.ID] {
				t.Errorf("GET %s: token %s listed again or not in /shop/ (containers %v)", path, tok.ID, tok.Containers)
			}
			seen[tok.ID] = true
		}
		path = ""
		if page.Pagination.After != "" && pages < 10 {
			path = "/tokens?container=" + url.QueryEscape("/shop/") + "&size=2&start=" + url.QueryEscape(page.Pagination.After)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("the pages of /shop/ listed %d tokens, want %d", len(seen), len(want))
	}
	var us tokenvault.Page[tokenvault.Token]
	r := s.do(t, "GET", "/tokens?type=token&container="+url.QueryEscape("/shop/us/"), string(app.Key), nil)
	wantStatus(t, "GET /tokens?container=/shop/us/", r, 200)
	r.json(t, &us)
	if len(us.Data) != 2 || us.Pagination.TotalItems != 2 {
		t.Errorf("?type=token&container=/shop/us/: %d tokens, %+v; want 2", len(us.Data), us.Pagination)
	}
}

// TestApplicationListReadsWhatItReturnsOverHTTP: with 1,000 applications,
// GET /applications?size=20 and its next page read a small multiple of
// what they return, and count the tenant's applications.
func TestApplicationListReadsWhatItReturnsOverHTTP(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Store = cs })
	const n = 1_000
	for i := range n {
		_, err := s.v.CreateApplication(context.Background(), tokenvault.Credential(s.mgmt), tokenvault.CreateApplicationRequest{
			Name: fmt.Sprint("app ", i), Type: tokenvault.Private, Permissions: []string{"token:read"},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	const bound = 3*20 + 40
	path := "/applications?size=20"
	for range 2 {
		s.settleChain(t)
		r, reads := s.countedDo(t, "GET", path, s.mgmt, nil)
		wantStatus(t, "GET "+path, r, 200)
		if reads > bound {
			t.Errorf("GET %s read %d entries, bound %d", path, reads, bound)
		}
		var page tokenvault.Page[tokenvault.Application]
		r.json(t, &page)
		if len(page.Data) != 20 || page.Pagination.TotalItems != n+1 || page.Pagination.After == "" {
			t.Fatalf("GET %s: %d applications, %+v", path, len(page.Data), page.Pagination)
		}
		path = "/applications?size=20&start=" + url.QueryEscape(page.Pagination.After)
	}
}

// TestLogPagesReadWhatTheyReturnOverHTTP: with 10,000 lines in a tenant's
// log, GET /logs?size=20, its next page by cursor, and the first and a
// cursor page of a date range each read from the store a small multiple
// of what they return; a deep page number is a 400 naming page.
func TestLogPagesReadWhatTheyReturnOverHTTP(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	clock := testfake.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Store, o.Now = cs, clock.Now })
	var app tokenvault.Application
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "backend", "type": "private", "permissions": []string{"token:create"},
	}).json(t, &app)
	const n = 5_000
	var middle string // a time between the two batches
	for batch := range 2 {
		body := make([]any, n)
		for i := range body {
			body[i] = fmt.Sprint("value ", batch, i)
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
	const bound = 3*20 + 40 // as the in-process test
	get := func(path string) tokenvault.Page[tokenvault.Log] {
		t.Helper()
		s.settleChain(t)
		r, reads := s.countedDo(t, "GET", path, s.mgmt, nil)
		wantStatus(t, "GET "+path, r, 200)
		if reads > bound {
			t.Errorf("GET %s read %d entries, bound %d", path, reads, bound)
		}
		var page tokenvault.Page[tokenvault.Log]
		r.json(t, &page)
		return page
	}
	first := get("/logs?size=20")
	if len(first.Data) != 20 || first.Pagination.After == "" || first.Pagination.TotalItems != 21 {
		t.Errorf("first page: %d lines, %+v", len(first.Data), first.Pagination)
	}
	next := get("/logs?size=20&start=" + url.QueryEscape(first.Pagination.After))
	if len(next.Data) != 20 || next.Data[0].ID == first.Data[19].ID || next.Data[0].CreatedAt.After(first.Data[19].CreatedAt) {
		t.Errorf("next page: %d lines, %+v", len(next.Data), next.Pagination)
	}
	// The first batch: everything before the middle.
	older := get("/logs?size=20&end_date=" + url.QueryEscape(middle))
	mid, _ := time.Parse(time.RFC3339Nano, middle)
	if len(older.Data) != 20 || !older.Data[0].CreatedAt.Before(mid) || older.Pagination.After == "" {
		t.Fatalf("the page before %s: %d lines, %+v", middle, len(older.Data), older.Pagination)
	}
	olderNext := get("/logs?size=20&end_date=" + url.QueryEscape(middle) + "&start=" + url.QueryEscape(older.Pagination.After))
	if len(olderNext.Data) != 20 || olderNext.Data[0].CreatedAt.After(older.Data[19].CreatedAt) {
		t.Errorf("the next page before %s: %d lines, %+v", middle, len(olderNext.Data), olderNext.Pagination)
	}
	newer := get("/logs?size=20&start_date=" + url.QueryEscape(middle))
	if len(newer.Data) != 20 || newer.Data[19].CreatedAt.Before(mid) {
		t.Errorf("the page from %s: %d lines, %+v", middle, len(newer.Data), newer.Pagination)
	}

	r := s.do(t, "GET", "/logs?size=100&page=102", s.mgmt, nil)
	wantStatus(t, "GET /logs?page=102", r, 400)
	if p := r.problem(t); p.Errors["page"] == nil {
		t.Errorf("problem %+v does not name page", p)
	}
}

// TestTenantListReadsWhatItReturnsOverHTTP: with 300 tenants, GET
// /operator/tenants?size=20 and its next page read a small multiple of
// what they return, and count every tenant; a deep page number is a 400
// naming page.
func TestTenantListReadsWhatItReturnsOverHTTP(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	s := newServer(t, httpapi.Options{OperatorKey: operatorKey}, func(o *tokenvault.Options) { o.Store = cs })
	const n = 300
	for i := range n - 1 {
		if _, err := s.v.CreateTenant(context.Background(), tokenvault.CreateTenantRequest{
			Name: fmt.Sprint("T", i), Owner: tokenvault.User{Email: "o@example.com"}}); err != nil {
			t.Fatal(err)
		}
	}
	const bound = 3*20 + 40
	get := func(path string) tokenvault.Page[tokenvault.Tenant] {
		t.Helper()
		s.settleChain(t)
		r, reads := s.countedDo(t, "GET", path, operatorKey, nil)
		wantStatus(t, "GET "+path, r, 200)
		if reads > bound {
			t.Errorf("GET %s read %d entries, bound %d", path, reads, bound)
		}
		var page tokenvault.Page[tokenvault.Tenant]
		r.json(t, &page)
		return page
	}
	first := get("/operator/tenants?size=20")
	if len(first.Data) != 20 || first.Pagination.TotalItems != n || first.Pagination.After == "" {
		t.Errorf("first page: %d tenants, %+v", len(first.Data), first.Pagination)
	}
	next := get("/operator/tenants?size=20&start=" + url.QueryEscape(first.Pagination.After))
	if len(next.Data) != 20 || next.Data[0].ID <= first.Data[19].ID || next.Pagination.TotalItems != n {
		t.Errorf("next page: %d tenants, %+v", len(next.Data), next.Pagination)
	}
	r := s.do(t, "GET", "/operator/tenants?size=100&page=102", operatorKey, nil)
	wantStatus(t, "GET /operator/tenants?page=102", r, 400)
	if p := r.problem(t); p.Errors["page"] == nil {
		t.Errorf("problem %+v does not name page", p)
	}
}

// TestEntityLogPagesReadWhatTheyReturnOverHTTP: a token read 2,000 times
// among 3,000 others: GET /logs?entity_type=token&entity_id= and its next
// page by cursor read a small multiple of what they return.
func TestEntityLogPagesReadWhatTheyReturnOverHTTP(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) { o.Store = cs })
	var app tokenvault.Application
	s.do(t, "POST", "/applications", s.mgmt, map[string]any{
		"name": "backend", "type": "private", "permissions": []string{"token:create", "token:read"},
	}).json(t, &app)
	ctx := context.Background()
	tok, err := s.v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "hot"})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]any, 3_000)
	for i := range body {
		body[i] = fmt.Sprint("other ", i)
	}
	if _, err := s.v.Tokenize(ctx, app.Key, body); err != nil {
		t.Fatal(err)
	}
	for range 2_000 {
		if _, err := s.v.GetToken(ctx, app.Key, tok.ID); err != nil {
			t.Fatal(err)
		}
	}
	const bound = 3*20 + 40
	get := func(path string) tokenvault.Page[tokenvault.Log] {
		t.Helper()
		s.settleChain(t)
		r, reads := s.countedDo(t, "GET", path, s.mgmt, nil)
		wantStatus(t, "GET "+path, r, 200)
		if reads > bound {
			t.Errorf("GET %s read %d entries, bound %d", path, reads, bound)
		}
		var page tokenvault.Page[tokenvault.Log]
		r.json(t, &page)
		return page
	}
	path := "/logs?size=20&entity_type=token&entity_id=" + tok.ID
	first := get(path)
	if len(first.Data) != 20 || first.Data[0].EntityID != tok.ID || first.Pagination.After == "" {
		t.Fatalf("first page: %d lines, %+v", len(first.Data), first.Pagination)
	}
	next := get(path + "&start=" + url.QueryEscape(first.Pagination.After))
	if len(next.Data) != 20 || next.Data[0].EntityID != tok.ID || next.Data[0].ID == first.Data[19].ID ||
		next.Data[0].CreatedAt.After(first.Data[19].CreatedAt) {
		t.Errorf("next page: %d lines, %+v", len(next.Data), next.Pagination)
	}
}
