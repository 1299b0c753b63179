package auditlog

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The lines of one entity type (the root's ListLogs with entity_type alone).
//
// The entity index (idx/log-e, keys.go) is ordered by entity, then time:
// a type's lines are spread across it, so listing them newest first from
// it means reading them all (for entity_type=token, most of the log). A
// line's type is in its record only, sealed with the rest of the line,
// not in its key. So a page of a type walks the log itself backwards from
// the cursor (or the end of the date range), as Newest does, opens each
// line it examines (a line is some 40 bytes to decrypt), keeps those of
// the type, and stops when the page is full or once it has examined its
// offset, its size and paging.ListBudget (1,000) more lines. A type that is
// frequent in the log fills its page after a few more lines than it
// shows.
//
// When the first chunk of the walk holds no line of the type, or the
// budget runs out first, the type is rare where the walk goes. Then (once
// a page) the type's index entries are counted, up to paging.ListBudget: a type
// with at most that many lines (a tenant's creation, its few banks) is
// answered from them exactly, as before, at a cost of those entries (keys
// only) and the page. A type with more, spread thinly over a long log,
// gets the walk's short (possibly empty) page, with an after that
// continues the walk from the last line examined: a client follows after
// until it is absent, as for tokens hidden by access rules. Either way a
// page reads at most its offset, its size and about twice paging.ListBudget
// entries.

// TypePage is what WalkType found for a page: the lines of the type it
// kept, or, when it answered from the type's index, all the type's lines.
type TypePage struct {
	// Keys and Lines are the page's lines, newest first (when not
	// FromIndex).
	Keys  []barrier.Key
	Lines []LineRecord
	// Skipped is how many lines of the type the walk passed over for the
	// page's offset; Last the suffix of the last line it examined, and
	// More whether a line in range follows it.
	Skipped int
	Last    string
	More    bool
	// FromIndex is set when the type is rare: Suffixes are then all its
	// lines in the range, oldest first (FewOfType), and the page is to be
	// cut from them.
	FromIndex bool
	Suffixes  []string
}

// WalkType walks tenant tid's lines strictly between after and before
// (within [start, end), which they derive from) newest first, for a page
// of skip lines skipped and size kept of those about entities of type
// typ, examining at most skip, size and budget more lines; when the
// walk's first chunk holds none of the type, or the budget runs out, and
// the type has at most few lines, it answers from the type's index
// instead (FromIndex).
func WalkType(t *unit.Tx, tid, typ string, start, end *time.Time, after, before string, skip, size, budget, few int) (*TypePage, error) {
	match := func(rec *LineRecord) bool { return rec.EntityType == typ }
	rare := func() ([]string, bool, error) { return FewOfType(t, tid, typ, start, end, few) }
	return walkMatching(t, tid, match, rare, after, before, skip, size, budget)
}

// walkMatching is WalkType for the lines match keeps, answered from
// rare's suffixes (oldest first) when the walk finds the lines rare and
// rare answers ok; a nil rare: never.
func walkMatching(t *unit.Tx, tid string, match func(*LineRecord) bool, rare func() ([]string, bool, error),
	after, before string, skip, size, budget int) (*TypePage, error) {
	budget += skip + size
	w := &TypePage{}
	// The first chunk is the page's size; the next ones what the page
	// still needs at the density of the type seen so far, and a quarter
	// more, or twice the last while none was seen: so a frequent type
	// reads little more than it shows, a rare one takes a few round trips,
	// and a walk holds at most one budget of sealed lines.
	chunk := max(size, 16)
	examined := 0
	probed := false // whether the type's index was counted
	if rare == nil {
		probed = true // nothing to probe
	}
	fromIndex := func() (bool, error) {
		probed = true
		suffixes, ok, err := rare()
		if ok {
			*w = TypePage{FromIndex: true, Suffixes: suffixes}
		}
		return ok, err
	}
walk:
	for {
		n := min(chunk, budget)
		if len(w.Lines) == size {
			n = 0 // only whether another line follows
		}
		kvs, err := t.ScanValuesBack(barrier.Tenant(tid).Logs(), before, n+1)
		if err != nil {
			return nil, err
		}
		for _, kv := range kvs {
			if after != "" && kv.Rest <= after {
				break walk // older than the range
			}
			if len(w.Lines) == size || budget == 0 {
				w.More = true
				break walk
			}
			budget--
			examined++
			w.Last = kv.Rest
			var rec LineRecord
			if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
				return nil, err
			}
			if !match(&rec) {
				continue
			}
			if w.Skipped < skip {
				w.Skipped++
				continue
			}
			w.Keys, w.Lines = append(w.Keys, kv.Key), append(w.Lines, rec)
		}
		if len(kvs) <= n {
			break // the start of the log
		}
		before = w.Last
		matched := w.Skipped + len(w.Lines)
		if matched == 0 && !probed {
			// Nothing of the type in the first chunk: a rare type?
			if ok, err := fromIndex(); err != nil || ok {
				return w, err
			}
		}
		if matched == 0 {
			chunk *= 2
		} else {
			chunk = max(16, (skip+size-matched)*examined/matched*5/4)
		}
	}

	if w.More && len(w.Lines) < size && !probed {
		// The budget ran out: a rare type is answered from its index.
		if ok, err := fromIndex(); err != nil || ok {
			return w, err
		}
	}
	return w, nil
}
