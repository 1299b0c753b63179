package tokenvault

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
)

// The lines of one entity type (ListLogs with entity_type alone).
//
// The entity index (idx/log-e, logs.go) is ordered by entity, then time:
// a type's lines are spread across it, so listing them newest first from
// it means reading them all (for entity_type=token, most of the log). A
// line's type is in its record only, sealed with the rest of the line,
// not in its key. So a page of a type walks the log itself backwards from
// the cursor (or the end of the date range), as logPage does, opens each
// line it examines (a line is some 40 bytes to decrypt), keeps those of
// the type, and stops when the page is full or once it has examined its
// offset, its size and listBudget (1,000) more lines. A type that is
// frequent in the log fills its page after a few more lines than it
// shows.
//
// When the first chunk of the walk holds no line of the type, or the
// budget runs out first, the type is rare where the walk goes. Then (once
// a page) the type's index entries are counted, up to listBudget: a type
// with at most that many lines (a tenant's creation, its few banks) is
// answered from them exactly, as before, at a cost of those entries (keys
// only) and the page. A type with more, spread thinly over a long log,
// gets the walk's short (possibly empty) page, with an after that
// continues the walk from the last line examined: a client follows after
// until it is absent, as for tokens hidden by access rules. Either way a
// page reads at most its offset, its size and about twice listBudget
// entries.

// typePage returns page pg of tenant tid's lines about entities of type
// typ created in [start, end), newest first, with its pagination,
// examining at most the page's offset, its size and budget more lines,
// and answering from the type's index when the walk's first chunk holds
// none of the type, or the budget runs out, and the type has at most few
// lines (ListLogs: listBudget, both). The total is
// the same lower bound as logPage's (the lines of the type up to the end
// of the page, plus one when After is set), exact when After is empty or
// when the page was answered from the type's index.
func (t *txn) typePage(tid, typ string, start, end *time.Time, pg pager, budget, few int) ([]Log, Pagination, error) {
	skip, pageNumber, err := pg.offset("lines")
	if err != nil {
		return nil, Pagination{}, err
	}
	after, before := logPageBounds(start, end, pg)

	budget += skip + pg.size
	data := []Log{}
	skipped := 0
	last := ""    // the suffix of the last line examined
	more := false // whether a line in range follows it
	// The first chunk is the page's size; the next ones what the page
	// still needs at the density of the type seen so far, and a quarter
	// more, or twice the last while none was seen: so a frequent type
	// reads little more than it shows, a rare one takes a few round trips,
	// and a walk holds at most one budget of sealed lines.
	chunk := max(pg.size, 16)
	examined := 0
	probed := false // whether the type's index was counted
walk:
	for {
		n := min(chunk, budget)
		if len(data) == pg.size {
			n = 0 // only whether another line follows
		}
		kvs, err := t.ScanValuesBack(barrier.Tenant(tid).Logs(), before, n+1)
		if err != nil {
			return nil, Pagination{}, err
		}
		for _, kv := range kvs {
			if after != "" && kv.Rest <= after {
				break walk // older than the range
			}
			if len(data) == pg.size || budget == 0 {
				more = true
				break walk
			}
			budget--
			examined++
			last = kv.Rest
			var rec auditlog.LineRecord
			if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
				return nil, Pagination{}, err
			}
			if rec.EntityType != typ {
				continue
			}
			if skipped < skip {
				skipped++
				continue
			}
			data = append(data, logOf(kv.Key, &rec))
		}
		if len(kvs) <= n {
			break // the start of the log
		}
		before = last
		matched := skipped + len(data)
		if matched == 0 && !probed {
			// Nothing of the type in the first chunk: a rare type?
			probed = true
			suffixes, ok, err := t.fewLinesOfType(tid, typ, start, end, few)
			if err != nil {
				return nil, Pagination{}, err
			}
			if ok {
				return t.typePageOf(tid, suffixes, pg)
			}
		}
		if matched == 0 {
			chunk *= 2
		} else {
			chunk = max(16, (skip+pg.size-matched)*examined/matched*5/4)
		}
	}

	if more && len(data) < pg.size && !probed {
		// The budget ran out: a rare type is answered from its index.
		suffixes, ok, err := t.fewLinesOfType(tid, typ, start, end, few)
		if err != nil {
			return nil, Pagination{}, err
		}
		if ok {
			return t.typePageOf(tid, suffixes, pg)
		}
	}

	total := skipped + len(data)
	var cursor string
	if more && last != "" {
		cursor = encodeCursor(last)
		total++
	}
	p := pagination(total, pageNumber, pg.size)
	p.After = cursor
	return data, p, nil
}

// typePageOf returns page pg of the lines at suffixes (oldest first: all
// those of a type, in a range), newest first, counted exactly.
func (t *txn) typePageOf(tid string, suffixes []string, pg pager) ([]Log, Pagination, error) {
	slices.Reverse(suffixes)
	lo, hi, p := pg.window(len(suffixes), func(i int) string { return suffixes[i] }, true)
	data := make([]Log, 0, hi-lo)
	for _, s := range suffixes[lo:hi] {
		l, ok, err := t.getLog(tid, s)
		if err != nil {
			return nil, Pagination{}, err
		}
		if ok {
			data = append(data, l)
		}
	}
	return data, p, nil
}

// fewLinesOfType returns the suffixes of tenant tid's lines about entities
// of type typ created in [start, end), oldest first, each once, and true,
// when the type has at most limit index entries (in the entity index, the
// legacy one and pending); false, having read at most limit+1 of them,
// when it has more.
func (t *txn) fewLinesOfType(tid, typ string, start, end *time.Time, limit int) ([]string, bool, error) {
	legacy, n, err := t.logsOfType(tid, typ, start, end, limit+1)
	if err != nil || n > limit {
		return nil, false, err
	}
	suffixes, m, err := t.packedRange(legacy, barrier.Tenant(tid).LineTypeIndex(typ), start, end, limit-n+1)
	if err != nil || n+m > limit {
		return nil, false, err
	}
	// The lines whose entries wait for the indexer (logs_index.go): few.
	pending, err := t.pendingLines(tid, typ, "", start, end)
	if err != nil || n+m+len(pending) > limit {
		return nil, false, err
	}
	// A line indexed in both layouts is listed once.
	suffixes = append(suffixes, pending...)
	slices.Sort(suffixes)
	return slices.Compact(suffixes), true, nil
}

// logsOfType returns the suffixes of the lines about entities of type typ
// created in [start, end), oldest first, from the legacy entity index's
// entries of that type, <entity id>/<nanos>/<id>, reading at most limit
// entries, and how many it read.
func (t *txn) logsOfType(tid, typ string, start, end *time.Time, limit int) ([]string, int, error) {
	var startKey, endKey string
	if start != nil {
		startKey = barrier.TimeKey(*start)
	}
	if end != nil {
		endKey = barrier.TimeKey(*end)
	}
	var suffixes []string
	n := 0
	err := t.Scan(barrier.Tenant(tid).LogEntityTypeIndex(typ), "", limit, func(_ barrier.Key, rest string) error {
		n++
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return nil
		}
		s := rest[i+1:]
		if len(s) < 16 || s[:16] < startKey || endKey != "" && s[:16] >= endKey {
			return nil
		}
		suffixes = append(suffixes, s)
		return nil
	})
	slices.Sort(suffixes)
	return suffixes, n, err
}

// packedRange adds to suffixes (sorted) those of the entries under prefix,
// of the entity index, created in [start, end), reading at most limit
// entries, and returns them all sorted, and how many entries it read. The
// entries under prefix end in a packed suffix.
func (t *txn) packedRange(suffixes []string, prefix barrier.Prefix, start, end *time.Time, limit int) ([]string, int, error) {
	var from, to uint64 = 0, math.MaxUint64
	if start != nil {
		from = uint64(barrier.UnixNanos(*start))
	}
	if end != nil {
		to = uint64(barrier.UnixNanos(*end))
	}
	n := 0
	err := t.Scan(prefix, "", limit, func(_ barrier.Key, rest string) error {
		n++
		if len(rest) < auditlog.PackedLen {
			return nil
		}
		p := []byte(rest[len(rest)-auditlog.PackedLen:])
		if at := binary.BigEndian.Uint64(p); at < from || at >= to {
			return nil
		}
		suffixes = append(suffixes, auditlog.UnpackSuffix(p))
		return nil
	})
	// Two layouts' entries, or a type's entries (in entity order), are
	// put in time order.
	if !slices.IsSorted(suffixes) {
		slices.Sort(suffixes)
	}
	return suffixes, n, err
}
