package tokenvault

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/store"
)

// entityPage is logPage for the lines of one entity (ListLogs with
// entity_type and entity_id): it walks each place the entity's lines are
// indexed backwards from the cursor (or the end of the range), taking at
// most the page's offset, its size and one more from each, and merges
// them: the entity index (idx/log-e, packed suffixes), the legacy index
// (idx/log-entity, text suffixes) and the pending entries of reads not
// yet indexed (few: logs_index.go). So a page of an entity costs its offset
// and its size, however many lines the entity has (a token read a million
// times), and its total is the same lower bound as logPage's. A cursor
// that is not a line's position (none this list hands out) is honoured
// by filtering, at the cost of the lines after it.
func (t *txn) entityPage(tid, typ, id string, start, end *time.Time, pg pager) ([]string, Pagination, error) {
	skip, pageNumber, err := pg.offset("lines")
	if err != nil {
		return nil, Pagination{}, err
	}
	after, before := logPageBounds(start, end, pg)
	want := skip + pg.size + 1
	// in reports whether a line's suffix is in the range, below before.
	in := func(s string) bool { return (after == "" || s > after) && (before == "" || s < before) }
	var all []string

	// The legacy index: text suffixes, in time order under the entity.
	n := 0
	err = t.ScanBack(barrier.Tenant(tid).LogEntityIndex(typ, id), before, 0, func(_ barrier.Key, s string) error {
		if !in(s) {
			if after != "" && s <= after {
				return store.ErrStop
			}
			return nil
		}
		all = append(all, s)
		if n++; n == want {
			return store.ErrStop
		}
		return nil
	})
	if err != nil {
		return nil, Pagination{}, err
	}

	// The entity index: packed suffixes, in time order under the entity.
	if id == "" || id[0] != 0 {
		n = 0
		err = t.ScanBack(barrier.Tenant(tid).LineIndex(typ, id), auditlog.PackedBound(before), 0, func(_ barrier.Key, rest string) error {
			if len(rest) != auditlog.PackedLen {
				return nil // an entity whose id extends this one's (not a UUID, ends in "/")
			}
			if at := binary.BigEndian.Uint64([]byte(rest[:8])); after != "" && auditlog.TimeKeyNanos(at) <= after {
				return store.ErrStop
			}
			s := auditlog.UnpackSuffix([]byte(rest))
			if !in(s) {
				return nil
			}
			all = append(all, s)
			if n++; n == want {
				return store.ErrStop
			}
			return nil
		})
		if err != nil {
			return nil, Pagination{}, err
		}
	}

	// The lines whose entries wait for the indexer.
	pending, err := t.pendingLines(tid, typ, id, start, end)
	if err != nil {
		return nil, Pagination{}, err
	}
	for _, s := range pending {
		if in(s) {
			all = append(all, s)
		}
	}

	// Newest first, each line once (one may be in two places), the
	// newest want of them.
	slices.Sort(all)
	all = slices.Compact(all)
	slices.Reverse(all)
	walked := all[:min(len(all), want)]
	p := pagination(len(walked), pageNumber, pg.size)
	lo, hi := min(skip, len(walked)), min(skip+pg.size, len(walked))
	page := walked[lo:hi]
	if hi < len(walked) {
		p.After = encodeCursor(page[len(page)-1])
	}
	return page, p, nil
}
