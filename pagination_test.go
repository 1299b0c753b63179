package tokenvault_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

// walk follows cursors from the first page to the last, calling between
// after every page, and returns the ids seen in order.
func walk[T any](t *testing.T, size int, list func(tokenvault.PageRequest) (*tokenvault.Page[T], error), id func(T) string, between func()) []string {
	t.Helper()
	var seen []string
	req := tokenvault.PageRequest{Size: size}
	for range 1000 {
		page, err := list(req)
		if err != nil {
			t.Fatalf("list(%+v): %v", req, err)
		}
		if len(page.Data) > size {
			t.Fatalf("page of %d items, size %d", len(page.Data), size)
		}
		for _, item := range page.Data {
			seen = append(seen, id(item))
		}
		if page.Pagination.After == "" {
			return seen
		}
		if len(page.Data) == 0 {
			t.Fatalf("an empty page carries a cursor %q", page.Pagination.After)
		}
		req.Start = page.Pagination.After
		between()
	}
	t.Fatal("the walk did not end")
	return nil
}

// wantEachOnce fails unless seen holds every id of want exactly once, and no
// id twice.
func wantEachOnce(t *testing.T, seen, want []string) {
	t.Helper()
	count := map[string]int{}
	for _, id := range seen {
		count[id]++
		if count[id] > 1 {
			t.Errorf("%s seen twice", id)
		}
	}
	for _, id := range want {
		if count[id] != 1 {
			t.Errorf("%s seen %d times, want once", id, count[id])
		}
	}
}

func TestCursorWalkSeesEveryTokenOnceWhileTokensAreAdded(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		app := e.app(t, tokenvault.Private, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
		n := 0
		create := func() string {
			n++
			req := tokenvault.TokenRequest{Type: "token", Data: fmt.Sprint("value ", n)}
			if n%3 == 0 {
				// Custom ids do not sort by time: the walk must not care.
				req.ID = fmt.Sprintf("custom-%03d", 1000-n)
			}
			tok, err := e.v.CreateToken(ctx, app.Key, req)
			if err != nil {
				t.Fatalf("CreateToken: %v", err)
			}
			if n%2 == 0 {
				e.clock.Advance(time.Millisecond) // and some share an instant
			}
			return tok.ID
		}
		var before []string
		for range 23 {
			before = append(before, create())
		}
		seen := walk(t, 4, func(p tokenvault.PageRequest) (*tokenvault.Page[tokenvault.Token], error) {
			return e.v.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{PageRequest: p})
		}, func(tok tokenvault.Token) string { return tok.ID }, func() { create(); create() })
		wantEachOnce(t, seen, before)

		// Offset pages and the cursor walk agree on the order.
		first, err := e.v.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Size: 4}})
		if err != nil {
			t.Fatal(err)
		}
		for i, tok := range first.Data {
			if seen[i] != tok.ID {
				t.Errorf("offset page item %d = %s, cursor walk %s", i, tok.ID, seen[i])
			}
		}
	})
}

func TestCursorWalkOfLogsIsNewestFirstAndSeesEachOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	app := e.app(t, tokenvault.Private, tokenvault.PermTokenCreate)
	for range 10 {
		if _, err := e.v.Tokenize(ctx, app.Key, map[string]any{"v": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Size: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var before []string
	for _, l := range all.Data {
		before = append(before, l.ID)
	}
	seen := walk(t, 3, func(p tokenvault.PageRequest) (*tokenvault.Page[tokenvault.Log], error) {
		return e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{PageRequest: p})
	}, func(l tokenvault.Log) string { return l.ID }, func() {
		e.clock.Advance(time.Second)
		if _, err := e.v.Tokenize(ctx, app.Key, map[string]any{"v": "y"}); err != nil {
			t.Fatal(err)
		}
	})
	wantEachOnce(t, seen, before)
	if len(seen) != len(before) {
		t.Errorf("newest-first walk saw %d lines, want the %d that existed when it began", len(seen), len(before))
	}
}

func TestCursorWalkOfApplications(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var before []string
	for range 7 {
		before = append(before, e.app(t, tokenvault.Private, tokenvault.PermTokenRead).ID)
	}
	seen := walk(t, 2, func(p tokenvault.PageRequest) (*tokenvault.Page[tokenvault.Application], error) {
		return e.v.ListApplications(ctx, e.mgmt, tokenvault.ListApplicationsRequest{PageRequest: p})
	}, func(a tokenvault.Application) string { return a.ID }, func() { e.app(t, tokenvault.Public, tokenvault.PermTokenCreate) })
	wantEachOnce(t, seen, before)
}

func TestCursorPagination(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for range 5 {
		e.app(t, tokenvault.Private, tokenvault.PermTokenRead)
	}
	// 6 applications with the bootstrap one.
	first, err := e.v.ListApplications(ctx, e.mgmt, tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Size: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if first.Pagination.After == "" {
		t.Fatal("the first of two pages has no cursor")
	}
	next, err := e.v.ListApplications(ctx, e.mgmt, tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Size: 4, Start: first.Pagination.After}})
	if err != nil {
		t.Fatal(err)
	}
	// The totals of a cursor page are the kept count of the whole list
	// (paging.Records): counting only what follows the cursor would be
	// a scan.
	want := tokenvault.Pagination{TotalItems: 6, PageNumber: 1, PageSize: 4, TotalPages: 2}
	if next.Pagination != want || len(next.Data) != 2 {
		t.Errorf("page after the cursor: %+v with %d items, want %+v with 2", next.Pagination, len(next.Data), want)
	}

	for _, tc := range []struct {
		name  string
		req   tokenvault.PageRequest
		field string
	}{
		{"not base64", tokenvault.PageRequest{Start: "!!"}, "start"},
		{"control characters", tokenvault.PageRequest{Start: "AAAA"}, "start"}, // three NUL bytes
		{"too long", tokenvault.PageRequest{Start: string(make([]byte, 2000))}, "start"},
		{"with a page", tokenvault.PageRequest{Page: 2, Start: first.Pagination.After}, "page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.v.ListApplications(ctx, e.mgmt, tokenvault.ListApplicationsRequest{PageRequest: tc.req})
			wantKind(t, "ListApplications", err, tokenvault.Invalid)
			var te *tokenvault.Error
			if !errors.As(err, &te) || te.Fields[tc.field] == nil {
				t.Errorf("error %v does not name %s", err, tc.field)
			}
		})
	}
}
