package listing_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// manyTokens is how many plain tokens the list cost tests load: enough
// that a page reading the tenant would read thousands of times its size.
const manyTokens = 20_000

// listFixture is a tenant of manyTokens plain tokens in their default
// container, with a few cards and a few tokens in /a/b/ among them, on a
// store that counts its reads.
type listFixture struct {
	e      *vaulttest.Env
	cs     *storetest.CountingStore
	cards  []string // ids of the cards, oldest first
	inA    []string // ids of the tokens in /a/b/, oldest first
	reader *tokenvault.Application
}

func newListFixture(t *testing.T) *listFixture {
	t.Helper()
	cs := storetest.NewCountingStore(memory.New())
	f := &listFixture{e: vaulttest.NewEnvOn(t, cs), cs: cs}
	creator := f.e.App(t, tokenvault.Private, "token:create")
	const batch = 5_000
	for n := 0; n < manyTokens; n += batch {
		body := make([]any, batch)
		for i := range body {
			body[i] = fmt.Sprintf("value-%08d", n+i)
		}
		if _, err := f.e.V.Tokenize(ctx, creator.Key, body); err != nil {
			t.Fatal(err)
		}
		f.e.Clock.Advance(1)
		// A few of the others between the batches.
		for range 5 {
			card, err := f.e.V.CreateToken(ctx, creator.Key, vaulttest.CardRequest(vaulttest.Visa))
			if err != nil {
				t.Fatal(err)
			}
			f.cards = append(f.cards, card.ID)
			tok, err := f.e.V.CreateToken(ctx, creator.Key, tokenvault.TokenRequest{Type: "token", Data: "a", Containers: []string{"/a/b/"}})
			if err != nil {
				t.Fatal(err)
			}
			f.inA = append(f.inA, tok.ID)
			f.e.Clock.Advance(1)
		}
	}
	f.reader = f.e.Reader(t, "mask", "token:read")
	// The kept counts' delta rows folded, as the count folder does
	// beside the writes: a page reads each count's base row and the
	// rows written since its last fold (bounded apart: BenchmarkCountBacklog).
	if _, err := vaulttest.FoldCounts(ctx, f.e.V); err != nil {
		t.Fatal(err)
	}
	return f
}

// reads runs fn with a context whose store reads are counted, and
// returns how many fn's call made (not the Vault's background work
// beside it).
func (f *listFixture) reads(t *testing.T, fn func(ctx context.Context) error) int64 {
	t.Helper()
	f.e.SettleChain(t)
	cctx, reads := storetest.Counted(ctx)
	if err := fn(cctx); err != nil {
		t.Fatal(err)
	}
	if reads() == 0 {
		t.Fatal("no read counted: the call's context did not reach the store")
	}
	return reads()
}

// TestTokenListPagesReadWhatTheyReturn holds every kind of token page to
// reads proportional to its size, in a tenant of 20,000 tokens: the first
// page, cursor pages all through the list, and pages filtered by type and
// container (a type and a container with few tokens, and one with none).
func TestTokenListPagesReadWhatTheyReturn(t *testing.T) {
	f := newListFixture(t)
	total := manyTokens + len(f.cards) + len(f.inA)
	list := func(req tokenvault.ListTokensRequest) (page *tokenvault.Page[tokenvault.Token], reads int64) {
		t.Helper()
		reads = f.reads(t, func(ctx context.Context) (err error) {
			page, err = f.e.V.ListTokens(ctx, f.reader.Key, req)
			return err
		})
		return page, reads
	}

	first, reads := list(tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Size: 20}})
	if reads > vaulttest.PageReadBound(20) {
		t.Errorf("first page of 20 read %d entries, bound %d", reads, vaulttest.PageReadBound(20))
	}
	if len(first.Data) != 20 || first.Pagination.TotalItems != total || first.Pagination.TotalPages != (total+19)/20 || first.Pagination.After == "" {
		t.Errorf("first page: %d tokens, %+v; want 20 of %d", len(first.Data), first.Pagination, total)
	}

	// A cursor walk through the whole list, 100 a page: every page within
	// its bound, every token once.
	seen := map[string]int{}
	req := tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Size: 100}}
	for pages := 0; ; pages++ {
		if pages > total/100+2 {
			t.Fatal("the walk did not end")
		}
		page, reads := list(req)
		if reads > vaulttest.PageReadBound(100) {
			t.Fatalf("page %d by cursor read %d entries, bound %d", pages+1, reads, vaulttest.PageReadBound(100))
		}
		for _, tok := range page.Data {
			seen[tok.ID]++
		}
		if page.Pagination.After == "" {
			break
		}
		req.Start = page.Pagination.After
	}
	if len(seen) != total {
		t.Errorf("cursor walk saw %d tokens, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s seen %d times", id, n)
		}
	}

	for _, tc := range []struct {
		name string
		req  tokenvault.ListTokensRequest
		want []string
	}{
		{"type card", tokenvault.ListTokensRequest{Type: "card"}, f.cards},
		{"type bank (none)", tokenvault.ListTokensRequest{Type: "bank"}, nil},
		{"container /a/", tokenvault.ListTokensRequest{Container: "/a/"}, f.inA},
		{"container /a/b/", tokenvault.ListTokensRequest{Container: "/a/b/"}, f.inA},
		{"container /none/", tokenvault.ListTokensRequest{Container: "/none/"}, nil},
		{"card in /pci/", tokenvault.ListTokensRequest{Type: "card", Container: "/pci/"}, f.cards},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Size = 100
			page, reads := list(tc.req)
			if reads > vaulttest.PageReadBound(len(tc.want)+1) {
				t.Errorf("read %d entries for %d tokens, bound %d", reads, len(tc.want), vaulttest.PageReadBound(len(tc.want)+1))
			}
			var got []string
			for _, tok := range page.Data {
				got = append(got, tok.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || page.Pagination.After != "" {
				t.Errorf("got %v (after %q), want %v", got, page.Pagination.After, tc.want)
			}
			if page.Pagination.TotalItems != len(tc.want) {
				t.Errorf("total_items %d, want %d", page.Pagination.TotalItems, len(tc.want))
			}
		})
	}

	// Search without an exact-value term walks the same indexes.
	searcher := f.e.Reader(t, "mask", "token:search")
	var page *tokenvault.Page[tokenvault.Token]
	reads = f.reads(t, func(ctx context.Context) (err error) {
		page, err = f.e.V.SearchTokens(ctx, searcher.Key, tokenvault.SearchTokensRequest{Query: "type:card", PageRequest: tokenvault.PageRequest{Size: 5}})
		return err
	})
	if reads > vaulttest.PageReadBound(5) || len(page.Data) != 5 || page.Data[0].ID != f.cards[0] {
		t.Errorf("search type:card read %d entries (bound %d), found %d tokens", reads, vaulttest.PageReadBound(5), len(page.Data))
	}
}

// TestTokenListBoundsWorkWhenRulesHideMost: a key that may read only
// /a/ of 20,000 tokens gets short pages, each examining at most its size
// and 1,000 more entries, whose cursors (sealed: they stop on tokens it
// may not read) lead through every token it may read, once; its totals
// are lower bounds, never the tenant's count.
func TestTokenListBoundsWorkWhenRulesHideMost(t *testing.T) {
	f := newListFixture(t)
	ruled, err := f.e.V.CreateApplication(ctx, f.e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "ruled", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/a/", Transform: "mask", Permissions: []string{"token:read"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Entries examined (index entry and record each), and the page's
	// own reads.
	bound := 2*int64(10+1000) + vaulttest.PageReadBound(10)
	var seen []string
	req := tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Size: 10}}
	calls := 0
	for ; calls < 100; calls++ {
		var page *tokenvault.Page[tokenvault.Token]
		reads := f.reads(t, func(ctx context.Context) (err error) {
			page, err = f.e.V.ListTokens(ctx, ruled.Key, req)
			return err
		})
		if reads > bound {
			t.Fatalf("call %d read %d entries, bound %d", calls+1, reads, bound)
		}
		for _, tok := range page.Data {
			seen = append(seen, tok.ID)
		}
		if n := page.Pagination.TotalItems; n > len(seen)+1 {
			t.Fatalf("call %d: total_items %d, more than the %d tokens shown so far and one", calls+1, n, len(seen))
		}
		if page.Pagination.After == "" {
			break
		}
		req.Start = page.Pagination.After
	}
	if calls < 10 {
		t.Errorf("%d calls walked 20,000 tokens: the work per call is not bounded", calls)
	}
	vaulttest.WantEachOnce(t, seen, f.inA)
	if len(seen) != len(f.inA) {
		t.Errorf("saw %d tokens, want %d", len(seen), len(f.inA))
	}

	// The first page of one token ends on a token the key may not read,
	// 1,000 entries in: its cursor is sealed (it does not spell that
	// token's position), and opens only in its own tenant.
	first, err := f.e.V.ListTokens(ctx, ruled.Key, tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Size: 1}})
	if err != nil || len(first.Data) != 0 || first.Pagination.After == "" {
		t.Fatalf("first page: %+v, %v; want no token and a cursor", first, err)
	}
	if raw, _ := base64.RawURLEncoding.DecodeString(first.Pagination.After); !strings.HasPrefix(string(raw), "~") {
		t.Errorf("cursor past a hidden token is %q, not sealed", raw)
	}
	other := f.e.Tenant(t, "Other")
	otherReader, err := f.e.V.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "reader", Type: tokenvault.Private, Permissions: []string{"token:read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.e.V.ListTokens(ctx, otherReader.Key, tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Start: first.Pagination.After}})
	vaulttest.WantField(t, err, "start")
}

// TestTokenListOffsetPagesAreBounded: page numbers cost their offset, so
// pages past maxListOffset tokens are Invalid, naming page, and point to
// the cursor.
func TestTokenListOffsetPagesAreBounded(t *testing.T) {
	e := vaulttest.NewEnv(t)
	for i := range 3 {
		e.Token(t, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprint(i)})
	}
	reader := e.Reader(t, "mask", "token:read")
	page, err := e.V.ListTokens(ctx, reader.Key, tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Page: 2, Size: 2}})
	if err != nil || len(page.Data) != 1 || page.Pagination.TotalItems != 3 || page.Pagination.PageNumber != 2 {
		t.Fatalf("page 2: %+v, %v", page, err)
	}
	_, err = e.V.ListTokens(ctx, reader.Key, tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Page: 102, Size: 100}})
	vaulttest.WantField(t, err, "page")
}

// TestCursorWalkSeesEveryTokenOnceWhileTokensAreDeleted walks the list
// while tokens ahead of the cursor and behind it are deleted and others
// added: every token that exists throughout is seen exactly once, and no
// token twice.
func TestCursorWalkSeesEveryTokenOnceWhileTokensAreDeleted(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		app := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenDelete)
		var ids []string
		for i := range 40 {
			tok, err := e.V.CreateToken(context.Background(), app.Key, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprint(i)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tok.ID)
			if i%3 == 0 {
				e.Clock.Advance(1)
			}
		}
		// Every fourth token is deleted during the walk, the rest stay.
		var stay, doomed []string
		for i, id := range ids {
			if i%4 == 1 {
				doomed = append(doomed, id)
			} else {
				stay = append(stay, id)
			}
		}
		n := 0
		seen := vaulttest.Walk(t, 3, func(p tokenvault.PageRequest) (*tokenvault.Page[tokenvault.Token], error) {
			return e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{PageRequest: p})
		}, func(tok tokenvault.Token) string { return tok.ID }, func() {
			// Delete from both ends, and add.
			for range 2 {
				if len(doomed) == 0 {
					break
				}
				var id string
				if n%2 == 0 {
					id, doomed = doomed[0], doomed[1:]
				} else {
					id, doomed = doomed[len(doomed)-1], doomed[:len(doomed)-1]
				}
				n++
				if err := e.V.DeleteToken(ctx, app.Key, id); err != nil {
					t.Fatal(err)
				}
			}
			e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "new"})
		})
		vaulttest.WantEachOnce(t, seen, stay)
	})
}

// TestRecordListPagesReadWhatTheyReturn: with 2,000 applications in a
// tenant, a page of 20 applications (the first, by cursor, and one by
// name filter) reads a small multiple of its size, and the first page
// carries the tenant's kept count; reactors, proxies, members and
// invitations page through the same walk (paging.Records).
func TestRecordListPagesReadWhatTheyReturn(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	e := vaulttest.NewEnvOn(t, cs)
	const n = 2_000
	for i := range n {
		_, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
			Name: fmt.Sprint("app ", i), Type: tokenvault.Private, Permissions: []string{"token:read"},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	list := func(req tokenvault.ListApplicationsRequest) *tokenvault.Page[tokenvault.Application] {
		t.Helper()
		e.SettleChain(t)
		cctx, counted := storetest.Counted(ctx)
		page, err := e.V.ListApplications(cctx, e.Mgmt, req)
		if err != nil {
			t.Fatal(err)
		}
		if reads := counted(); reads > vaulttest.PageReadBound(20) || reads == 0 {
			t.Errorf("ListApplications(%+v) read %d entries, bound %d", req.PageRequest, reads, vaulttest.PageReadBound(20))
		}
		return page
	}
	first := list(tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Size: 20}})
	if len(first.Data) != 20 || first.Pagination.TotalItems != n+1 || first.Pagination.After == "" {
		t.Fatalf("first page: %d applications, %+v; want 20 of %d", len(first.Data), first.Pagination, n+1)
	}
	next := list(tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Size: 20, Start: first.Pagination.After}})
	if len(next.Data) != 20 || next.Data[0].ID <= first.Data[19].ID || next.Pagination.TotalItems != n+1 {
		t.Errorf("next page: %d applications, %+v", len(next.Data), next.Pagination)
	}
	// Deleting one is counted in its commit.
	if err := e.V.DeleteApplication(ctx, e.Mgmt, next.Data[0].ID); err != nil {
		t.Fatal(err)
	}
	if again := list(tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Size: 20}}); again.Pagination.TotalItems != n {
		t.Errorf("after a delete: total_items %d, want %d", again.Pagination.TotalItems, n)
	}
	_, err := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{PageRequest: tokenvault.PageRequest{Page: 502, Size: 20}})
	vaulttest.WantField(t, err, "page")
}

// TestTokenListDeepContainers: containers are indexed 8 segments deep; a
// filter on a deeper container walks its ancestor's index and still finds
// exactly the tokens in it or below it, with a lower-bound total.
func TestTokenListDeepContainers(t *testing.T) {
	e := vaulttest.NewEnv(t)
	deep := "/a/b/c/d/e/f/g/h/i/j/"
	in := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "in", Containers: []string{deep}})
	sibling := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "sibling", Containers: []string{"/a/b/c/d/e/f/g/h/x/"}})
	reader := e.App(t, tokenvault.Private, "token:read")
	for _, tc := range []struct {
		container string
		want      []string
	}{
		{deep, []string{in.ID}},
		{"/a/b/c/d/e/f/g/h/i/", []string{in.ID}},
		{"/a/b/c/d/e/f/g/h/", []string{in.ID, sibling.ID}},
		{"/a/b/c/d/e/f/g/h/y/", nil},
	} {
		page, err := e.V.ListTokens(ctx, reader.Key, tokenvault.ListTokensRequest{Container: tc.container})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tok := range page.Data {
			got = append(got, tok.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || page.Pagination.TotalItems != len(tc.want) {
			t.Errorf("container %s: %v (total %d), want %v", tc.container, got, page.Pagination.TotalItems, tc.want)
		}
	}
}

// TestTokenListFollowsUpdatesAndDeletes: a token moved to another
// container by an update leaves the old container's list and count and
// joins the new one's, in the update's commit; a delete leaves every list.
func TestTokenListFollowsUpdatesAndDeletes(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.App(t, tokenvault.Private, "token:create", "token:read", "token:update", "token:delete")
	tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x", Containers: []string{"/a/"}})
	if err != nil {
		t.Fatal(err)
	}
	count := func(req tokenvault.ListTokensRequest) int {
		t.Helper()
		page, err := e.V.ListTokens(ctx, app.Key, req)
		if err != nil {
			t.Fatal(err)
		}
		if page.Pagination.TotalItems != len(page.Data) {
			t.Errorf("%+v: total_items %d, %d tokens listed", req, page.Pagination.TotalItems, len(page.Data))
		}
		return len(page.Data)
	}
	if _, err := e.V.UpdateToken(ctx, app.Key, tok.ID, json.RawMessage(`{"containers": ["/b/"]}`)); err != nil {
		t.Fatal(err)
	}
	if a, b, all := count(tokenvault.ListTokensRequest{Container: "/a/"}), count(tokenvault.ListTokensRequest{Container: "/b/"}), count(tokenvault.ListTokensRequest{}); a != 0 || b != 1 || all != 1 {
		t.Errorf("after the move: /a/ %d, /b/ %d, all %d; want 0, 1, 1", a, b, all)
	}
	if err := e.V.DeleteToken(ctx, app.Key, tok.ID); err != nil {
		t.Fatal(err)
	}
	if b, typ, all := count(tokenvault.ListTokensRequest{Container: "/b/"}), count(tokenvault.ListTokensRequest{Type: "token"}), count(tokenvault.ListTokensRequest{}); b != 0 || typ != 0 || all != 0 {
		t.Errorf("after the delete: /b/ %d, type token %d, all %d; want none", b, typ, all)
	}
}

// TestTokenListCountsExpiredUntilSwept: an expired token leaves the list
// at its expiry and the kept count when the sweeper removes it, as the
// documentation of total_items says.
func TestTokenListCountsExpiredUntilSwept(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.App(t, tokenvault.Private, "token:create", "token:read")
	at := e.Clock.Now().Add(time.Hour)
	if _, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x", ExpiresAt: &at}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(2 * time.Hour)
	page, err := e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{})
	if err != nil || len(page.Data) != 0 || page.Pagination.TotalItems != 1 {
		t.Fatalf("expired, not swept: %+v, %v; want no token and a count of 1", page, err)
	}
	if _, err := e.V.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	page, err = e.V.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{})
	if err != nil || len(page.Data) != 0 || page.Pagination.TotalItems != 0 {
		t.Errorf("swept: %+v, %v; want a count of 0", page, err)
	}
}
