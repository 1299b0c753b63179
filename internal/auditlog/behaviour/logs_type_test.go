package auditlog_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// typeBudget is how many lines a page of an entity type examines beyond
// its offset and its size (ListLogs).
const typeBudget = 1000

// newMixedLogFixture is a tenant with manyLines token creation lines of
// three types, in four batches an hour apart: the oldest batch holds
// 1,250 banks (every fourth line) among tokens, so that walking back to
// them from the newest line passes 15,000 lines of other types; the three
// newer batches hold 1,500 cards (every tenth line) among tokens. Beside
// them, the tenant's own lines: one of type tenant, a few applications.
func newMixedLogFixture(t *testing.T) *logFixture {
	t.Helper()
	cs := storetest.NewCountingStore(memory.New())
	f := &logFixture{e: vaulttest.NewEnvOn(t, cs), cs: cs}
	creator := f.e.App(t, tokenvault.Private, "token:create")
	for batch := range 4 {
		f.e.Clock.Advance(time.Hour)
		f.batches = append(f.batches, f.e.Clock.Now())
		body := make([]any, linesPerBatch)
		for i := range body {
			n := batch*linesPerBatch + i
			switch {
			case batch == 0 && i%4 == 0:
				body[i] = map[string]any{"type": "bank", "data": map[string]any{
					"routing_number": "021000021", "account_number": fmt.Sprintf("%08d", n)}}
			case batch > 0 && i%10 == 0:
				body[i] = map[string]any{"type": "card", "data": map[string]any{
					"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031}}
			default:
				body[i] = fmt.Sprintf("value-%08d", n)
			}
		}
		if _, err := f.e.V.Tokenize(ctx, creator.Key, body); err != nil {
			t.Fatal(err)
		}
	}
	f.e.Clock.Advance(time.Hour)
	return f
}

// linesByType walks the whole log by cursor and returns the ids of its
// lines of each type, newest first: what the pages of a type must list.
func (f *logFixture) linesByType(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	req := tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Size: 100}}
	for {
		p, err := f.e.V.ListLogs(ctx, f.e.Mgmt, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range p.Data {
			out[l.EntityType] = append(out[l.EntityType], l.ID)
		}
		if p.Pagination.After == "" {
			return out
		}
		req.Start = p.Pagination.After
	}
}

// walkType follows a type's pages by cursor to the end, holding each page
// to the reads of its size and the budget, and returns the ids listed in
// order and how many pages it took.
func (f *logFixture) walkType(t *testing.T, req tokenvault.ListLogsRequest) (ids []string, pages int) {
	t.Helper()
	for {
		pages++
		if pages > manyLines/typeBudget+manyLines/req.Size+5 {
			t.Fatalf("the walk of %q took more than %d pages", req.EntityType, pages)
		}
		p := f.list(t, req, req.Size+typeBudget)
		for _, l := range p.Data {
			if l.EntityType != req.EntityType {
				t.Fatalf("a page of %q lists line %s of type %q", req.EntityType, l.ID, l.EntityType)
			}
			ids = append(ids, l.ID)
		}
		if p.Pagination.After == "" {
			if p.Pagination.TotalItems != len(p.Data) {
				t.Errorf("the last page of %q: total %d, want its %d lines (exact at the end)", req.EntityType, p.Pagination.TotalItems, len(p.Data))
			}
			return ids, pages
		}
		if p.Pagination.TotalItems != len(p.Data)+1 {
			t.Errorf("a cursor page of %q: total %d with %d lines and an after, want the lower bound %d", req.EntityType,
				p.Pagination.TotalItems, len(p.Data), len(p.Data)+1)
		}
		req.Start = p.Pagination.After
	}
}

// TestTypeLogPagesReadWhatTheyReturn: with 20,000 lines of mixed types, a
// page of one entity type (GET /logs?entity_type=) reads at most a small
// multiple of its size and the budget of 1,000 lines, not the type's
// lines (which for token are most of the log); a frequent type reads a
// small multiple of its size alone; walking each type by cursor lists
// exactly its lines, newest first, each once, with a date range too.
func TestTypeLogPagesReadWhatTheyReturn(t *testing.T) {
	f := newMixedLogFixture(t)
	want := f.linesByType(t)
	if len(want["token"]) < 15_000 || len(want["card"]) != 1_500 || len(want["bank"]) != 1_250 || len(want["tenant"]) != 1 {
		t.Fatalf("the fixture's lines: %d tokens, %d cards, %d banks, %d tenant", len(want["token"]), len(want["card"]), len(want["bank"]), len(want["tenant"]))
	}
	page := func(typ string, size int) tokenvault.ListLogsRequest {
		return tokenvault.ListLogsRequest{EntityType: typ, PageRequest: tokenvault.PageRequest{Size: size}}
	}

	// A frequent type: the page and the next read what they show.
	first := f.list(t, page("token", 20), 2*20)
	if len(first.Data) != 20 || first.Pagination.After == "" || first.Pagination.TotalItems != 21 ||
		!slices.Equal(ids(first.Data), want["token"][:20]) {
		t.Fatalf("first page of tokens: %d lines, %+v", len(first.Data), first.Pagination)
	}
	req := page("token", 20)
	req.Start = first.Pagination.After
	if next := f.list(t, req, 2*20); !slices.Equal(ids(next.Data), want["token"][20:40]) {
		t.Errorf("next page of tokens: %v, want %v", ids(next.Data), want["token"][20:40])
	}
	// page=3: its offset, its size.
	third := f.list(t, tokenvault.ListLogsRequest{EntityType: "token", PageRequest: tokenvault.PageRequest{Page: 3, Size: 20}}, 2*60)
	if !slices.Equal(ids(third.Data), want["token"][40:60]) || third.Pagination.TotalItems != 61 {
		t.Errorf("page 3 of tokens: %d lines, %+v", len(third.Data), third.Pagination)
	}
	_, err := f.e.V.ListLogs(ctx, f.e.Mgmt, tokenvault.ListLogsRequest{EntityType: "token", PageRequest: tokenvault.PageRequest{Page: 102, Size: 100}})
	vaulttest.WantField(t, err, "page")

	// Banks lie 15,000 lines back: the first pages run out of budget and
	// are empty, with an after that continues the walk.
	banks := f.list(t, page("bank", 20), 20+typeBudget)
	if len(banks.Data) != 0 || banks.Pagination.After == "" || banks.Pagination.TotalItems != 1 {
		t.Errorf("first page of banks: %d lines, %+v; want an empty page that continues", len(banks.Data), banks.Pagination)
	}

	// Every type, walked by cursor: exactly its lines, newest first, each once.
	for _, c := range []struct {
		typ  string
		size int
	}{{"token", 100}, {"card", 20}, {"card", 100}, {"bank", 100}, {"application", 3}, {"tenant", 20}, {"tenant_member", 20}, {"spaceship", 20}} {
		got, pages := f.walkType(t, page(c.typ, c.size))
		if !slices.Equal(got, want[c.typ]) {
			t.Errorf("the walk of %q, %d a page: %d lines in %d pages, want its %d lines newest first, each once", c.typ, c.size, len(got), pages, len(want[c.typ]))
		}
	}
	// A rare type (here one line, the log's first) is answered at once,
	// exactly, from its index, once the walk's first chunk held none.
	if p := f.list(t, page("tenant", 20), 2*20); len(p.Data) != 1 || p.Pagination.After != "" || p.Pagination.TotalItems != 1 {
		t.Errorf("the tenant's lines: %d, %+v", len(p.Data), p.Pagination)
	}

	// A date range with a type: the cards of the third batch, and the
	// banks of the first (end_date only).
	from, to := f.batches[2], f.batches[3]
	req = page("card", 50)
	req.StartDate, req.EndDate = &from, &to
	got, _ := f.walkType(t, req)
	// Newest first: the 500 cards of the newest batch, then these.
	if !slices.Equal(got, want["card"][500:1000]) {
		t.Errorf("cards in [%v, %v): %d, want the 500 of the third batch", from, to, len(got))
	}
	req = page("bank", 100)
	req.EndDate = &f.batches[1]
	if got, pages := f.walkType(t, req); !slices.Equal(got, want["bank"]) || pages != 13 {
		t.Errorf("banks before %v: %d lines in %d pages, want all %d in 13", f.batches[1], len(got), pages, len(want["bank"]))
	}
}

// ids returns the ids of lines.
func ids(lines []tokenvault.Log) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.ID
	}
	return out
}
