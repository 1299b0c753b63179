package listing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// listAll walks the list req names to its end, by cursor, 50 a page, and
// returns the ids it shows and the total_items of its first page.
func listAll(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential, req tokenvault.ListTokensRequest) (ids []string, total int) {
	t.Helper()
	req.Size, req.Page = 50, 0
	for first := true; ; first = false {
		page, err := v.ListTokens(context.Background(), key, req)
		if err != nil {
			t.Fatalf("ListTokens(%+v): %v", req, err)
		}
		if first {
			total = page.Pagination.TotalItems
		}
		for _, tok := range page.Data {
			ids = append(ids, tok.ID)
		}
		if page.Pagination.After == "" {
			return ids, total
		}
		req.Start = page.Pagination.After
	}
}

// checkLists holds each list of reqs to want (the ids it should show, in
// any order): every id once, and total_items equal to their number.
func checkLists(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential, want func(req tokenvault.ListTokensRequest) []string, reqs ...tokenvault.ListTokensRequest) {
	t.Helper()
	for _, req := range reqs {
		got, total := listAll(t, v, key, req)
		slices.Sort(got)
		w := slices.Sorted(slices.Values(want(req)))
		if !slices.Equal(got, w) {
			t.Errorf("list %+v shows %d tokens %v, want %d %v", req, len(got), got, len(w), w)
		}
		if total != len(w) {
			t.Errorf("list %+v: total_items %d, want %d", req, total, len(w))
		}
	}
}

// heldTokens is what a test knows of the tokens it made: their type and
// containers, to compute what each list must show.
type heldTokens map[string]tokenvault.Token

func (h heldTokens) add(tok *tokenvault.Token) { h[tok.ID] = *tok }

// matching are the ids of the tokens req's type and container filters
// take (a container filter takes a token with any container at or below
// it).
func (h heldTokens) matching(req tokenvault.ListTokensRequest) []string {
	var ids []string
	for id, tok := range h {
		if req.Type != "" && tok.Type != req.Type {
			continue
		}
		if req.Container != "" && !slices.ContainsFunc(tok.Containers, func(c string) bool {
			return len(c) >= len(req.Container) && c[:len(req.Container)] == req.Container
		}) {
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// TestTokenListsOneEntryPerToken: lists and their totals are exact, on
// every store, while tokens move between containers and are deleted; a
// token in two containers under one ancestor is listed and counted once
// in the ancestor's list; deep containers are exact too.
func TestTokenListsOneEntryPerToken(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		app := e.App(t, tokenvault.Private, "token:create", "token:read", "token:update", "token:delete")
		held := heldTokens{}
		create := func(req tokenvault.TokenRequest) *tokenvault.Token {
			t.Helper()
			tok, err := e.V.CreateToken(ctx, app.Key, req)
			if err != nil {
				t.Fatal(err)
			}
			held.add(tok)
			return tok
		}
		twice := create(tokenvault.TokenRequest{Type: "token", Data: "both", Containers: []string{"/shop/eu/", "/shop/us/"}})
		create(tokenvault.TokenRequest{Type: "token", Data: "eu", Containers: []string{"/shop/eu/"}})
		card := create(vaulttest.CardRequest(vaulttest.Visa))
		create(tokenvault.TokenRequest{Type: "token", Data: "default"})
		deep := create(tokenvault.TokenRequest{Type: "token", Data: "deep", Containers: []string{"/a/b/c/d/e/f/g/h/i/j/"}})
		create(tokenvault.TokenRequest{Type: "card", Data: map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2039},
			Containers: []string{"/shop/eu/", "/pci/"}})

		reqs := []tokenvault.ListTokensRequest{
			{}, {Type: "token"}, {Type: "card"}, {Type: "bank"},
			{Container: "/shop/"}, {Container: "/shop/eu/"}, {Container: "/shop/us/"}, {Container: "/shop/", Type: "card"},
			{Container: "/a/b/c/d/e/f/g/h/i/"}, {Container: "/pci/"}, {Container: "/none/"},
		}
		checkLists(t, e.V, app.Key, held.matching, reqs...)
		if got, total := listAll(t, e.V, app.Key, tokenvault.ListTokensRequest{Container: "/shop/", Type: "token"}); len(got) != 2 || total != 2 {
			t.Errorf("/shop/ tokens: %v, total %d; want the two (the one in /shop/eu/ and /shop/us/ once)", got, total)
		}

		// Moves between containers, into the same shape as another token,
		// and deletes.
		for _, mv := range []struct {
			id         string
			containers []string
		}{
			{twice.ID, []string{"/shop/us/"}},
			{deep.ID, []string{"/shop/eu/"}},
			{card.ID, []string{"/shop/us/", "/pci/"}},
			{twice.ID, []string{"/shop/eu/", "/shop/us/", "/x/"}},
		} {
			patch, _ := json.Marshal(map[string]any{"containers": mv.containers})
			tok, err := e.V.UpdateToken(ctx, app.Key, mv.id, patch)
			if err != nil {
				t.Fatal(err)
			}
			held.add(tok)
			checkLists(t, e.V, app.Key, held.matching, reqs...)
		}
		for _, id := range []string{deep.ID, card.ID} {
			if err := e.V.DeleteToken(ctx, app.Key, id); err != nil {
				t.Fatal(err)
			}
			delete(held, id)
			checkLists(t, e.V, app.Key, held.matching, reqs...)
		}
	})
}

// TestTokenListsManyShapes: a tenant with more shapes than its registry
// holds (a container per customer) still lists every token once, with
// exact totals for every token and each type, and a page reads a bounded
// number of lists, not one per shape; a container of a shape past the
// registry is listed from its type's overflow list (its total then a
// lower bound), one whose tokens all have registered shapes from those
// alone (exact), and tokens follow deletes.
func TestTokenListsManyShapes(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	e := vaulttest.NewEnvOn(t, cs)
	app := e.App(t, tokenvault.Private, "token:create", "token:read", "token:delete")
	const (
		customers = 1000 // each a shape: far more than the registry holds
		maxShapes = 256  // maxListShapes
	)
	held := heldTokens{}
	body := make([]any, customers)
	for i := range body {
		body[i] = map[string]any{"type": "token", "data": fmt.Sprint("c", i), "containers": []any{fmt.Sprintf("/customers/%03d/", i)}}
	}
	out, err := e.V.Tokenize(ctx, app.Key, body)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tok := range out.([]any) {
		held.add(tok.(*tokenvault.Token))
		ids = append(ids, tok.(*tokenvault.Token).ID)
	}
	card, err := e.V.CreateToken(ctx, app.Key, vaulttest.CardRequest(vaulttest.Visa))
	if err != nil {
		t.Fatal(err)
	}
	held.add(card)
	checkLists(t, e.V, app.Key, held.matching,
		tokenvault.ListTokensRequest{}, tokenvault.ListTokensRequest{Type: "token"}, tokenvault.ListTokensRequest{Type: "card"})
	// A page merges at most maxShapes + 3 lists: it reads the registry's
	// keys, and each list's count and first entries (a few reads each,
	// more if a count is kept in several rows), never one list per shape.
	bound := vaulttest.PageReadBound(20) + 5*(maxShapes+3)
	for _, req := range []tokenvault.ListTokensRequest{{}, {Type: "token"}} {
		cctx, counted := storetest.Counted(ctx) // the call's reads, not the background's beside it
		if _, err := e.V.ListTokens(cctx, app.Key, req); err != nil {
			t.Fatal(err)
		}
		if n := counted(); n > bound || n == 0 {
			t.Errorf("a page of %+v in a tenant of %d shapes read %d times, want at most %d", req, customers, n, bound)
		}
	}

	// A container none of whose tokens overflowed lists from its shape
	// alone: exact, and at the cost of its page.
	checkLists(t, e.V, app.Key, held.matching, tokenvault.ListTokensRequest{Container: "/customers/000/"}, tokenvault.ListTokensRequest{Container: "/pci/"})
	cctx, counted := storetest.Counted(ctx)
	if _, err := e.V.ListTokens(cctx, app.Key, tokenvault.ListTokensRequest{Container: "/customers/000/"}); err != nil {
		t.Fatal(err)
	}
	if n := counted(); n > vaulttest.PageReadBound(20)+maxShapes || n == 0 {
		t.Errorf("a page of a container with no overflow read %d times, want at most %d", n, vaulttest.PageReadBound(20)+maxShapes)
	}
	for _, c := range []string{"/customers/", fmt.Sprintf("/customers/%03d/", customers-1)} {
		req := tokenvault.ListTokensRequest{Container: c}
		got, total := listAll(t, e.V, app.Key, req)
		want := held.matching(req)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("container %s shows %d tokens, want %d", c, len(got), len(want))
		}
		if total < min(len(want), 50) || total > len(want)+1 {
			t.Errorf("container %s: total_items %d, want a lower bound: at least its first page, at most %d and one more page", c, total, len(want))
		}
	}

	// A delete of a token past the registry leaves its lists.
	last := ids[customers-1]
	if err := e.V.DeleteToken(ctx, app.Key, last); err != nil {
		t.Fatal(err)
	}
	delete(held, last)
	checkLists(t, e.V, app.Key, held.matching, tokenvault.ListTokensRequest{}, tokenvault.ListTokensRequest{Type: "token"})
	if got, _ := listAll(t, e.V, app.Key, tokenvault.ListTokensRequest{Container: fmt.Sprintf("/customers/%03d/", customers-1)}); len(got) != 0 {
		t.Errorf("the deleted token is still listed in its container: %v", got)
	}

	// The tenant's statistics count every token by type from the kept
	// counts, by container those of registered shapes, the others as
	// unplaced: reading the registry and the counts, not the tokens
	// (about 520 reads here, for 1,000 tokens of 1,000 shapes).
	cctx, counted = storetest.Counted(ctx)
	st, err := e.V.TenantStatistics(cctx, e.Mgmt)
	if err != nil {
		t.Fatal(err)
	}
	if n := counted(); n > 5*(maxShapes+3)+50 || n == 0 {
		t.Errorf("TenantStatistics in a tenant of %d shapes read %d times, want at most %d", customers, n, 5*(maxShapes+3)+50)
	}
	placed := 0
	for _, n := range st.Tokens.ByContainer {
		placed += n
	}
	if st.Tokens.Total != customers || st.Tokens.ByType["token"] != customers-1 || st.Tokens.ByType["card"] != 1 ||
		st.Tokens.Unplaced == 0 || placed+st.Tokens.Unplaced != customers || len(st.Tokens.ByContainer) > maxShapes {
		t.Errorf("TenantStatistics tokens = total %d, by type %v, %d containers holding %d, unplaced %d; want %d: %d token, 1 card",
			st.Tokens.Total, st.Tokens.ByType, len(st.Tokens.ByContainer), placed, st.Tokens.Unplaced, customers, customers-1)
	}
}

// TestMultiInstanceTokenListShapes: two Vaults on one PostgreSQL database
// creating tokens of the same new shapes at once (each learns of the
// other's shapes only from the store) list every token once with exact
// totals, on both; a token deleted on the Vault that did not create it
// leaves the lists of both.
func TestMultiInstanceTokenListShapes(t *testing.T) {
	p := vaulttest.NewPGPair(t)
	boot := p.Tenant(t)
	app, err := p.A.CreateApplication(context.Background(), boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "lists", Type: tokenvault.Private, Permissions: []string{"token:create", "token:read", "token:delete"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	held := heldTokens{}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, v := range []*tokenvault.Vault{p.A, p.B} {
		wg.Go(func() {
			for i := range 12 {
				c := []string{fmt.Sprintf("/shop/%d/", i%4)}
				if i%3 == 0 {
					c = append(c, "/shop/all/")
				}
				tok, err := v.CreateToken(context.Background(), app.Key, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprint(i), Containers: c})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				held.add(tok)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	reqs := []tokenvault.ListTokensRequest{{}, {Type: "token"}, {Container: "/shop/"}, {Container: "/shop/1/"}, {Container: "/shop/all/"}}
	for _, v := range []*tokenvault.Vault{p.A, p.B} {
		checkLists(t, v, app.Key, held.matching, reqs...)
	}
	var gone []string
	for id := range held {
		if len(gone) < 5 {
			gone = append(gone, id)
		}
	}
	for _, id := range gone {
		if err := p.B.DeleteToken(context.Background(), app.Key, id); err != nil {
			t.Fatal(err)
		}
		delete(held, id)
	}
	for _, v := range []*tokenvault.Vault{p.A, p.B} {
		checkLists(t, v, app.Key, held.matching, reqs...)
	}
}
