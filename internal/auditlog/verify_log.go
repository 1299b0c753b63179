package auditlog

import (
	"cmp"
	"context"
	"hash/maphash"
	"slices"
	"sort"
	"strconv"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// walkLog walks the tenant's log from when its chain began (head.Since)
// and reports each line that is not on the chain, is not queued to be
// chained, and was not chained after the walk began: Inserted, at the
// sequence number after the last chained line before it in the log. A
// line off the index that carries a valid link into a gap of it is the
// line whose index entry is gone: it is fed to the Verifier, and the
// entry reported Missing. Only the lines off the index are opened.
func (w *chainVerifyWalk) walkLog(ctx context.Context) error {
	if !w.headOK {
		return nil // without a head, when the chain began is unknown
	}
	after := barrier.TimeKey(w.head.Since) // every line of that nanosecond sorts after it
	prevSeq := w.head.FirstSeq - 1
	for {
		n := 0
		err := w.work.View(ctx, func(t *unit.Tx) error {
			var off []string
			var offPrev []uint64
			n = 0
			err := t.Scan(barrier.Tenant(w.tid).Logs(), after, chainVerifyBatch, func(_ barrier.Key, suffix string) error {
				n++
				after = suffix
				if seq, ok := w.onChain.get(suffix); ok {
					prevSeq = seq
					return nil
				}
				off, offPrev = append(off, suffix), append(offPrev, prevSeq)
				return nil
			})
			if err != nil {
				return err
			}
			for i, suffix := range off {
				if err := w.offChain(t, suffix, offPrev[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || n < chainVerifyBatch {
			return err
		}
	}
}

// offChain checks the line at log/<suffix>, which the sequence index does
// not name, and which follows the chained line prevSeq in the log.
func (w *chainVerifyWalk) offChain(t *unit.Tx, suffix string, prevSeq uint64) error {
	queued, err := t.Has(barrier.Tenant(w.tid).ChainQueueEntry(suffix))
	if err != nil || queued {
		return err // to be linked by the linker (counted in Unlinked)
	}
	rec, found, err := w.readLine(t, suffix)
	if err != nil || !found {
		return err
	}
	id := unit.KeyID(suffix)
	at := prevSeq + 1
	switch {
	case rec == nil:
		w.problem(auditchain.Inserted, at, 0, id, "a line that is not on the chain, and whose record does not open")
	case rec.Link == nil:
		w.problem(auditchain.Inserted, at, 0, id, "a line written after the chain began that is not on it")
	case rec.Link.Seq > w.head.Seq:
		// Chained after the verification read the head.
	case rec.Link.Seq >= w.head.FirstSeq && !w.covered.has(rec.Link.Seq):
		w.problem(auditchain.Missing, rec.Link.Seq, 0, id, "the sequence index has no entry for this line")
		w.feed(suffix, rec)
	default:
		w.problem(auditchain.Inserted, at, 0, id,
			"a line that is not on the chain; it carries the link of line "+strconv.FormatUint(rec.Link.Seq, 10))
	}
	return nil
}

// report is the Verifier's report with the walk's own problems: the
// Verifier's Missing ranges lose the sequence numbers the walk found a
// line for (an unreadable line is Altered, not also Missing) or reported
// Missing already, and the problems are in order again.
func (w *chainVerifyWalk) report() *auditchain.Report {
	r := w.ver.Report()
	var reported seqSet
	var out []auditchain.Problem
	for i, p := range append(w.own, r.Problems...) {
		if p.Kind != auditchain.Missing {
			out = append(out, p)
			continue
		}
		// The walk's own Missing lines (an index entry gone) were found,
		// in the log: only the Verifier's are trimmed of what was found.
		gone := func(seq uint64) bool { return !reported.has(seq) && (i < len(w.own) || !w.covered.has(seq)) }
		last := max(p.LastSeq, p.Seq)
		for lo := p.Seq; lo <= last; {
			for lo <= last && !gone(lo) {
				lo++
			}
			hi := lo
			for hi < last && gone(hi+1) {
				hi++
			}
			if lo > last {
				break
			}
			q := p
			q.Seq, q.LastSeq = lo, 0
			if hi > lo {
				q.LastSeq = hi
			}
			out = append(out, q)
			for s := lo; s <= hi; s++ {
				reported.add(s)
			}
			lo = hi + 1
		}
	}
	slices.SortStableFunc(out, func(a, b auditchain.Problem) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Kind, b.Kind))
	})
	if out == nil {
		out = []auditchain.Problem{}
	}
	r.Problems, r.OK = out, len(out) == 0
	r.Unlinked = w.unlinked
	return r
}

// suffixSet is the set of the lines on the chain, by a hash of their key
// suffix, with their sequence numbers: 16 bytes a line. A seeded 64-bit
// hash is used rather than the keys themselves (some 60 bytes each); two
// keys of a million colliding is about 1 in 10^7, and would hide one
// inserted line from the log walk, never report a sound one.
type suffixSet struct {
	seed    maphash.Seed
	entries []suffixSeq
	sorted  bool
}

type suffixSeq struct{ h, seq uint64 }

func (s *suffixSet) hash(suffix string) uint64 {
	if s.seed == (maphash.Seed{}) {
		s.seed = maphash.MakeSeed()
	}
	return maphash.String(s.seed, suffix)
}

func (s *suffixSet) add(suffix string, seq uint64) {
	s.entries = append(s.entries, suffixSeq{s.hash(suffix), seq})
	s.sorted = false
}

// seal sorts the set for get.
func (s *suffixSet) seal() {
	slices.SortFunc(s.entries, func(a, b suffixSeq) int { return cmp.Compare(a.h, b.h) })
	s.sorted = true
}

func (s *suffixSet) get(suffix string) (uint64, bool) {
	if !s.sorted {
		s.seal()
	}
	h := s.hash(suffix)
	i, ok := slices.BinarySearchFunc(s.entries, h, func(e suffixSeq, h uint64) int { return cmp.Compare(e.h, h) })
	if !ok {
		return 0, false
	}
	return s.entries[i].seq, true
}

// seqSet is a set of sequence numbers as sorted disjoint ranges: a few
// for a sound chain of any length, since lines are mostly added in order.
type seqSet struct{ ranges []seqRange }

type seqRange struct{ lo, hi uint64 }

func (s *seqSet) find(seq uint64) int {
	return sort.Search(len(s.ranges), func(i int) bool { return s.ranges[i].hi >= seq })
}

func (s *seqSet) has(seq uint64) bool {
	i := s.find(seq)
	return i < len(s.ranges) && s.ranges[i].lo <= seq
}

func (s *seqSet) add(seq uint64) {
	if n := len(s.ranges); n > 0 && s.ranges[n-1].hi+1 == seq {
		s.ranges[n-1].hi = seq // the common case: in order
		return
	}
	if s.has(seq) {
		return
	}
	i := s.find(seq)
	s.ranges = slices.Insert(s.ranges, i, seqRange{seq, seq})
	if i+1 < len(s.ranges) && s.ranges[i+1].lo == seq+1 {
		s.ranges[i].hi = s.ranges[i+1].hi
		s.ranges = slices.Delete(s.ranges, i+1, i+2)
	}
	if i > 0 && s.ranges[i-1].hi+1 == seq {
		s.ranges[i-1].hi = s.ranges[i].hi
		s.ranges = slices.Delete(s.ranges, i, i+1)
	}
}

// max is the largest number in s (0 when empty).
func (s *seqSet) max() uint64 {
	if len(s.ranges) == 0 {
		return 0
	}
	return s.ranges[len(s.ranges)-1].hi
}
