package auditlog

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store"
)

// Reading pages of lines. The walks here return what a page holds, newest
// first, reading only as far as the page needs; the root turns them into
// the API's pages (numbers, totals, cursors). A page of the whole log
// walks the log itself (Newest); a page of one entity walks each place
// the entity's lines are indexed (EntityNewest); a page of one type walks
// the log and opens each line to read its type (WalkType), or, for a rare
// type, answers from the type's index entries (FewOfType).
//
// Bounds are line key suffixes, <nanos>/<id>: after and before ("": no
// bound) exclude the lines at or below after and at or above before
// (RangeBounds, lowered to a cursor by the caller).

// Newest returns the suffixes of tenant tid's lines strictly between
// after and before, newest first, at most n of them.
func Newest(t *unit.Tx, tid, after, before string, n int) ([]string, error) {
	var walked []string
	err := t.ScanBack(barrier.Tenant(tid).Logs(), before, n, func(_ barrier.Key, suffix string) error {
		if after != "" && suffix <= after {
			return store.ErrStop // older than the range
		}
		walked = append(walked, suffix)
		return nil
	})
	return walked, err
}

// EntityNewest returns the suffixes of tenant tid's lines about entity
// typ/id strictly between after and before (within [start, end), which
// they derive from), newest first, at most want of them: it walks each
// place the entity's lines are indexed backwards from before, taking at
// most want from each, and merges them: the entity index (idx/log-e,
// packed suffixes), the legacy index (idx/log-entity, text suffixes) and
// the pending entries of reads not yet indexed (few). So it costs want
// entries, however many lines the entity has. A before that is not a
// line's position is honoured by filtering, at the cost of the lines
// after it.
func EntityNewest(t *unit.Tx, tid, typ, id string, start, end *time.Time, after, before string, want int) ([]string, error) {
	// in reports whether a line's suffix is in the range, below before.
	in := func(s string) bool { return (after == "" || s > after) && (before == "" || s < before) }
	var all []string

	// The legacy index: text suffixes, in time order under the entity.
	n := 0
	err := t.ScanBack(barrier.Tenant(tid).LogEntityIndex(typ, id), before, 0, func(_ barrier.Key, s string) error {
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
		return nil, err
	}

	// The entity index: packed suffixes, in time order under the entity.
	if id == "" || id[0] != 0 {
		n = 0
		err = t.ScanBack(barrier.Tenant(tid).LineIndex(typ, id), PackedBound(before), 0, func(_ barrier.Key, rest string) error {
			if len(rest) != PackedLen {
				return nil // an entity whose id extends this one's (not a UUID, ends in "/")
			}
			if at := binary.BigEndian.Uint64([]byte(rest[:8])); after != "" && TimeKeyNanos(at) <= after {
				return store.ErrStop
			}
			s := UnpackSuffix([]byte(rest))
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
			return nil, err
		}
	}

	// The lines whose entries wait for the indexer.
	pending, err := PendingLines(t, tid, typ, id, start, end)
	if err != nil {
		return nil, err
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
	return all[:min(len(all), want)], nil
}

// PendingLines returns the suffixes of the lines of tenant tid whose
// index entries are pending (the root's log indexer), about entities of
// type typ (and id, unless it is ""), created in [start, end), in key
// order.
func PendingLines(t *unit.Tx, tid, typ, id string, start, end *time.Time) ([]string, error) {
	var from, to string
	if start != nil {
		from = barrier.TimeKey(*start)
	}
	if end != nil {
		to = barrier.TimeKey(*end)
	}
	var out []string
	err := t.ScanKeys(barrier.Tenant(tid).PendingLogIndex(), func(_ barrier.Key, rest string) error {
		e, ok := ParsePending(rest)
		if !ok || e.Suffix < from || to != "" && e.Suffix >= to {
			return nil
		}
		if e.Type == typ && (id == "" || e.ID == id) {
			out = append(out, e.Suffix)
		}
		return nil
	})
	return out, err
}

// FewOfType returns the suffixes of tenant tid's lines about entities of
// type typ created in [start, end), oldest first, each once, and true,
// when the type has at most limit index entries (in the entity index, the
// legacy one and pending); false, having read at most limit+1 of them,
// when it has more.
func FewOfType(t *unit.Tx, tid, typ string, start, end *time.Time, limit int) ([]string, bool, error) {
	legacy, n, err := legacyOfType(t, tid, typ, start, end, limit+1)
	if err != nil || n > limit {
		return nil, false, err
	}
	suffixes, m, err := packedRange(t, legacy, barrier.Tenant(tid).LineTypeIndex(typ), start, end, limit-n+1)
	if err != nil || n+m > limit {
		return nil, false, err
	}
	// The lines whose entries wait for the indexer: few.
	pending, err := PendingLines(t, tid, typ, "", start, end)
	if err != nil || n+m+len(pending) > limit {
		return nil, false, err
	}
	// A line indexed in both layouts is listed once.
	suffixes = append(suffixes, pending...)
	slices.Sort(suffixes)
	return slices.Compact(suffixes), true, nil
}

// legacyOfType returns the suffixes of the lines about entities of type
// typ created in [start, end), oldest first, from the legacy entity
// index's entries of that type, <entity id>/<nanos>/<id>, reading at most
// limit entries, and how many it read.
func legacyOfType(t *unit.Tx, tid, typ string, start, end *time.Time, limit int) ([]string, int, error) {
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
func packedRange(t *unit.Tx, suffixes []string, prefix barrier.Prefix, start, end *time.Time, limit int) ([]string, int, error) {
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
		if len(rest) < PackedLen {
			return nil
		}
		p := []byte(rest[len(rest)-PackedLen:])
		if at := binary.BigEndian.Uint64(p); at < from || at >= to {
			return nil
		}
		suffixes = append(suffixes, UnpackSuffix(p))
		return nil
	})
	// Two layouts' entries, or a type's entries (in entity order), are
	// put in time order.
	if !slices.IsSorted(suffixes) {
		slices.Sort(suffixes)
	}
	return suffixes, n, err
}
