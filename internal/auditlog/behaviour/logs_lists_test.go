package auditlog_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// manyLines is how many audit lines the log cost tests load: enough that
// a page reading the tenant's log would read a thousand times its size.
const manyLines = 20_000

// logFixture is a tenant with manyLines token creation lines, written in
// four batches an hour apart, on a store that counts its reads.
type logFixture struct {
	e       *vaulttest.Env
	cs      *storetest.CountingStore
	batches []time.Time // when each batch was written
}

const linesPerBatch = manyLines / 4

func newLogFixture(t *testing.T) *logFixture {
	t.Helper()
	cs := storetest.NewCountingStore(memory.New())
	f := &logFixture{e: vaulttest.NewEnvOn(t, cs), cs: cs}
	creator := f.e.App(t, tokenvault.Private, "token:create")
	for n := 0; n < manyLines; n += linesPerBatch {
		f.e.Clock.Advance(time.Hour)
		f.batches = append(f.batches, f.e.Clock.Now())
		body := make([]any, linesPerBatch)
		for i := range body {
			body[i] = fmt.Sprintf("value-%08d", n+i)
		}
		if _, err := f.e.V.Tokenize(ctx, creator.Key, body); err != nil {
			t.Fatal(err)
		}
	}
	f.e.Clock.Advance(time.Hour)
	return f
}

// list returns the page req asks for, failing t when it reads more than
// a small multiple of read entries from the store.
func (f *logFixture) list(t *testing.T, req tokenvault.ListLogsRequest, read int) *tokenvault.Page[tokenvault.Log] {
	t.Helper()
	f.e.SettleChain(t)
	cctx, counted := storetest.Counted(ctx) // the call's reads, not the background's beside it
	p, err := f.e.V.ListLogs(cctx, f.e.Mgmt, req)
	if err != nil {
		t.Fatalf("ListLogs(%+v): %v", req, err)
	}
	if reads, bound := counted(), vaulttest.PageReadBound(read); reads > bound || reads == 0 {
		t.Errorf("ListLogs(%+v) read %d entries, bound %d", req, reads, bound)
	}
	return p
}

// TestLogPagesReadWhatTheyReturn: with 20,000 lines in a tenant's log,
// the first page, a cursor page, an offset page, and pages of a date
// range (first, by cursor, to its end) each read a small multiple of
// their size from the store, not the log; they are newest first, each
// line once, and the totals are lower bounds that are exact once the
// walk reaches the end.
func TestLogPagesReadWhatTheyReturn(t *testing.T) {
	f := newLogFixture(t)
	page := func(size int, start string) tokenvault.ListLogsRequest {
		return tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Size: size, Start: start}}
	}

	first := f.list(t, page(20, ""), 20)
	if len(first.Data) != 20 || first.Pagination.After == "" || first.Pagination.TotalItems != 21 {
		t.Fatalf("first page: %d lines, %+v", len(first.Data), first.Pagination)
	}
	next := f.list(t, page(20, first.Pagination.After), 20)
	if len(next.Data) != 20 || next.Pagination.After == "" || next.Pagination.PageNumber != 1 {
		t.Fatalf("cursor page: %d lines, %+v", len(next.Data), next.Pagination)
	}
	lines := append(first.Data, next.Data...)
	for i := 1; i < len(lines); i++ {
		if a, b := lines[i-1], lines[i]; a.CreatedAt.Before(b.CreatedAt) || a.ID == b.ID {
			t.Fatalf("lines %d and %d out of order or repeated: %v %s, %v %s", i-1, i, a.CreatedAt, a.ID, b.CreatedAt, b.ID)
		}
	}
	// page=3 is the third twenty: it reads its offset, not the log.
	third := f.list(t, tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Page: 3, Size: 20}}, 60)
	second := f.list(t, page(20, next.Pagination.After), 20)
	if len(third.Data) != 20 || third.Data[0].ID != second.Data[0].ID || third.Pagination.TotalItems != 61 {
		t.Errorf("page 3: %d lines, %+v, first %s; want the cursor's third page, first %s", len(third.Data), third.Pagination, third.Data[0].ID, second.Data[0].ID)
	}
	// Pages deeper than the first 10,000 lines are reached by cursor.
	_, err := f.e.V.ListLogs(ctx, f.e.Mgmt, tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Page: 102, Size: 100}})
	vaulttest.WantField(t, err, "page")

	// The second batch, walked to its end by cursor, 100 a page.
	from, to := f.batches[1], f.batches[2]
	req := tokenvault.ListLogsRequest{StartDate: &from, EndDate: &to, PageRequest: tokenvault.PageRequest{Size: 100}}
	seen := map[string]bool{}
	var last *tokenvault.Page[tokenvault.Log]
	for calls := 0; ; calls++ {
		if calls > linesPerBatch/100+1 {
			t.Fatalf("the walk of %d lines took more than %d pages", linesPerBatch, calls)
		}
		p := f.list(t, req, 100)
		for _, l := range p.Data {
			if l.CreatedAt.Before(from) || !l.CreatedAt.Before(to) || seen[l.ID] {
				t.Fatalf("line %s at %v: outside [%v, %v) or seen twice", l.ID, l.CreatedAt, from, to)
			}
			seen[l.ID] = true
		}
		last = p
		if p.Pagination.After == "" {
			break
		}
		if p.Pagination.TotalItems != 101 {
			t.Errorf("a full page's total = %d, want its lines and one more (a lower bound)", p.Pagination.TotalItems)
		}
		req.Start = p.Pagination.After
	}
	// Tokenize logs one line per token.
	if len(seen) != linesPerBatch {
		t.Errorf("the walk of the second batch saw %d lines, want %d", len(seen), linesPerBatch)
	}
	if last.Pagination.TotalItems != len(last.Data) {
		t.Errorf("the last page's total = %d, want its %d lines (exact at the end)", last.Pagination.TotalItems, len(last.Data))
	}
	// A range's first page, and one that ends before the log does.
	older := f.batches[1]
	if p := f.list(t, tokenvault.ListLogsRequest{EndDate: &older, PageRequest: tokenvault.PageRequest{Size: 10}}, 10); len(p.Data) != 10 ||
		!p.Data[0].CreatedAt.Before(older) {
		t.Errorf("the page before %v: %d lines, first at %v", older, len(p.Data), p.Data[0].CreatedAt)
	}
}

// TestEntityLogPagesReadWhatTheyReturn: a token read 3,000 times among
// 5,000 other tokens has 3,001 lines; the pages of its lines
// (entity_type=token&entity_id=...) each read a small multiple of their
// size; a cursor walk sees each of its lines once, newest first, and a
// date range keeps to itself. (The counting store is not SingleProcess,
// so every line is indexed with its write; lines whose entries are
// pending are listed by TestLogIndexAnswersEntityQueries and its
// neighbours.)
func TestEntityLogPagesReadWhatTheyReturn(t *testing.T) {
	cs := storetest.NewCountingStore(memory.New())
	e := vaulttest.NewEnvOn(t, cs)
	f := &logFixture{e: e, cs: cs}
	app := e.App(t, tokenvault.Private, "token:create", "token:read")
	tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "hot"})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]any, 5_000)
	for i := range body {
		body[i] = fmt.Sprint("other ", i)
	}
	if _, err := e.V.Tokenize(ctx, app.Key, body); err != nil {
		t.Fatal(err)
	}
	const reads = 3_000
	var middle time.Time
	for i := range reads {
		if i == reads/2 {
			e.Clock.Advance(time.Second)
			middle = e.Clock.Now()
		}
		if _, err := e.V.GetToken(ctx, app.Key, tok.ID); err != nil {
			t.Fatal(err)
		}
	}
	req := tokenvault.ListLogsRequest{EntityType: tokenvault.EntityToken, EntityID: tok.ID, PageRequest: tokenvault.PageRequest{Size: 20}}
	first := f.list(t, req, 20)
	if len(first.Data) != 20 || first.Pagination.TotalItems != 21 || first.Pagination.After == "" {
		t.Fatalf("first page: %d lines, %+v", len(first.Data), first.Pagination)
	}
	req.Size = 100
	seen := map[string]bool{}
	var last time.Time
	for calls := 0; ; calls++ {
		if calls > reads/100+2 {
			t.Fatalf("the walk of %d lines took more than %d pages", reads+1, calls)
		}
		p := f.list(t, req, 100)
		for _, l := range p.Data {
			if l.EntityID != tok.ID || seen[l.ID] || !last.IsZero() && l.CreatedAt.After(last) {
				t.Fatalf("line %s (%s at %v): another entity's, seen twice, or out of order", l.ID, l.EntityID, l.CreatedAt)
			}
			seen[l.ID], last = true, l.CreatedAt
		}
		if p.Pagination.After == "" {
			break
		}
		req.Start = p.Pagination.After
	}
	if len(seen) != reads+1 {
		t.Errorf("the walk saw %d lines of the token, want %d", len(seen), reads+1)
	}
	// The reads from the middle on: a date range, walked to its end.
	req = tokenvault.ListLogsRequest{EntityType: tokenvault.EntityToken, EntityID: tok.ID, StartDate: &middle, PageRequest: tokenvault.PageRequest{Size: 100}}
	n := 0
	for {
		p := f.list(t, req, 100)
		for _, l := range p.Data {
			if l.CreatedAt.Before(middle) || l.Operation != tokenvault.OpRead {
				t.Fatalf("line %s at %v (%s) before %v", l.ID, l.CreatedAt, l.Operation, middle)
			}
		}
		n += len(p.Data)
		if p.Pagination.After == "" {
			break
		}
		req.Start = p.Pagination.After
	}
	if n != reads/2 {
		t.Errorf("lines from the middle on: %d, want %d", n, reads/2)
	}
}
