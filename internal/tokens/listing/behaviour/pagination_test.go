package listing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

func TestCursorWalkSeesEveryTokenOnceWhileTokensAreAdded(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		ctx := context.Background()
		app := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
		n := 0
		create := func() string {
			n++
			req := tokenvault.TokenRequest{Type: "token", Data: fmt.Sprint("value ", n)}
			if n%3 == 0 {
				// Custom ids do not sort by time: the walk must not care.
				req.ID = fmt.Sprintf("custom-%03d", 1000-n)
			}
			tok, err := e.V.CreateToken(ctx, app.Key, req)
			if err != nil {
				t.Fatalf("CreateToken: %v", err)
			}
			if n%2 == 0 {
				e.Clock.Advance(time.Millisecond) // and some share an instant
			}
			return tok.ID
		}
		var before []string
		for range 23 {
			before = append(before, create())
		}
		seen := vaulttest.Walk(t, 4, func(p tokenvault.PageRequest) (*tokenvault.Page[tokenvault.Token], error) {
			return e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{PageRequest: p})
		}, func(tok tokenvault.Token) string { return tok.ID }, func() { create(); create() })
		vaulttest.WantEachOnce(t, seen, before)

		// Offset pages and the cursor walk agree on the order.
		first, err := e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Size: 4}})
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
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	app := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
	for range 10 {
		if _, err := e.V.Tokenize(ctx, app.Key, map[string]any{"v": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Size: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var before []string
	for _, l := range all.Data {
		before = append(before, l.ID)
	}
	seen := vaulttest.Walk(t, 3, func(p tokenvault.PageRequest) (*tokenvault.Page[tokenvault.Log], error) {
		return e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{PageRequest: p})
	}, func(l tokenvault.Log) string { return l.ID }, func() {
		e.Clock.Advance(time.Second)
		if _, err := e.V.Tokenize(ctx, app.Key, map[string]any{"v": "y"}); err != nil {
			t.Fatal(err)
		}
	})
	vaulttest.WantEachOnce(t, seen, before)
	if len(seen) != len(before) {
		t.Errorf("newest-first walk saw %d lines, want the %d that existed when it began", len(seen), len(before))
	}
}

func TestCursorWalkOfApplications(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	var before []string
	for range 7 {
		before = append(before, e.App(t, tokenvault.Private, tokenvault.PermTokenRead).ID)
	}
	seen := vaulttest.Walk(t, 2, func(p tokenvault.PageRequest) (*tokenvault.Page[tokenvault.Application], error) {
		return e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{PageRequest: p})
	}, func(a tokenvault.Application) string { return a.ID }, func() { e.App(t, tokenvault.Public, tokenvault.PermTokenCreate) })
	vaulttest.WantEachOnce(t, seen, before)
}

func TestCursorPagination(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	for range 5 {
		e.App(t, tokenvault.Private, tokenvault.PermTokenRead)
	}
	// 6 applications with the bootstrap one.
	first, err := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Size: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if first.Pagination.After == "" {
		t.Fatal("the first of two pages has no cursor")
	}
	next, err := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Size: 4, Start: first.Pagination.After}})
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
			_, err := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{PageRequest: tc.req})
			vaulttest.WantKind(t, "ListApplications", err, tokenvault.Invalid)
			var te *tokenvault.Error
			if !errors.As(err, &te) || te.Fields[tc.field] == nil {
				t.Errorf("error %v does not name %s", err, tc.field)
			}
		})
	}
}
