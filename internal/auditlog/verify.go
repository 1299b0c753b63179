package auditlog

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store"
)

// Verifying a tenant's chain from the store (docs/audit-chain.md,
// "Verifying from the store").
//
// The walk reads the head, then the sequence index in order, each entry's
// line with it, and feeds the lines to an auditchain.Verifier, which
// checks the hashes, the links and the checkpoints. What only the store
// shows it reports itself: a line whose record does not open (Altered),
// an index entry naming a line that is not its own sequence number's
// (Reordered), a line of the log that is not on the chain (Inserted: the
// log is walked too), a line on the chain whose index entry is gone
// (Missing), and a tail the head counts but no line holds (Missing).
//
// The walk runs in read transactions of at most chainVerifyBatch index
// entries (or log keys) each, not in one: a store such as PostgreSQL
// should not hold one transaction over a million lines, and the memory a
// transaction pins is bounded. So the walk is no snapshot: lines written
// meanwhile are after the head it read first, and it stops there (they
// are verified next time); a retention pass pruning lines meanwhile may
// make the walk report them Missing at the chain's start, and verifying
// again reports nothing. The Verifier keeps about 100 bytes per line and
// the walk 16 more (chainVerifyWalk.onChain), so a million lines take
// about 120 MB, whatever the lines hold.

// chainVerifyBatch bounds the index entries, or log keys, one read
// transaction of a verification reads.
const chainVerifyBatch = 1000

// Verify verifies tenant tid's audit chain as the store work runs on
// holds it (see the walk above), against the checkpoints the store holds
// and the signing keys keys returns (read after the chain's head), and
// reports what is wrong, each problem at its exact sequence number. The
// caller links what it can first: lines still queued are counted apart,
// as Report.Unlinked.
//
// Besides what auditchain.Verifier finds in any copy, a store walk
// reports: Altered at seq for a line (or, at the chain's last seq, the
// head) whose record does not open or decode; Missing at seq for an index
// entry whose line is gone, for a line of the log whose index entry is
// gone (with its LineID), and for lines the head or a checkpoint counts
// past the last line there; Reordered at seq for an index entry naming a
// line whose own seq is another; Inserted, with the line's LineID, at the
// seq after the last chained line before it in the log's (time) order,
// for a line written since the chain began that is neither on the chain
// nor queued to be; BadCheckpoint at seq for a checkpoint record that
// does not open, or that the head names and the store lacks.
//
// Returns NotFound for an unknown tenant (or one being deleted), and the
// store's errors: a damaged line is a problem in the report, never an
// error.
func Verify(ctx context.Context, work *unit.Work, tid string, keys func(context.Context) ([]auditchain.PublicKey, error)) (*auditchain.Report, error) {
	w := &chainVerifyWalk{work: work, tid: tid}
	if err := w.countUnlinked(ctx); err != nil {
		return nil, err
	}
	if err := w.readHead(ctx); err != nil {
		return nil, err
	}
	ks, err := keys(ctx)
	if err != nil {
		return nil, err
	}
	w.ver = auditchain.NewVerifier(tid, ks)
	w.ver.ExpectFirst = w.head.FirstSeq
	if err := w.walkIndex(ctx); err != nil {
		return nil, err
	}
	if err := w.walkLog(ctx); err != nil {
		return nil, err
	}
	if err := w.addCheckpoints(ctx); err != nil {
		return nil, err
	}
	w.checkHead()
	return w.report(), nil
}

// chainVerifyWalk is the state of one verification.
type chainVerifyWalk struct {
	work *unit.Work
	tid  string
	ver  *auditchain.Verifier
	// head is the chain's head, read first; headOK is false when the
	// store holds no readable head (then the walk is bounded by the
	// index alone), and headAltered true when it holds one that does
	// not open.
	head        Head
	headOK      bool
	headAltered bool
	// onChain is every line the index names, by its key: the log walk
	// finds the lines off the chain with it.
	onChain suffixSet
	// covered is the sequence numbers a line was found for (fed to the
	// Verifier, or reported Altered): the Verifier's Missing ranges are
	// trimmed of them (report).
	covered seqSet
	// lastIndexed is the last sequence number the index named.
	lastIndexed uint64
	// headLine is the hash of the line at the head's sequence number,
	// when one was found.
	headLine *auditchain.Hash
	// own is the problems the walk found, added to the Verifier's.
	own []auditchain.Problem
	// unlinked is how many of the tenant's lines were queued for the
	// linker when the walk began.
	unlinked int
}

// countUnlinked counts the tenant's lines queued for the linker, before
// the head is read: a line linked meanwhile is after the head the walk
// reads, so it is counted here and not verified, never neither. The queue
// holds every tenant's unlinked lines, which the linker keeps short.
func (w *chainVerifyWalk) countUnlinked(ctx context.Context) error {
	after := ""
	for {
		n := 0
		err := w.work.View(ctx, func(t *unit.Tx) error {
			n = 0
			return t.Scan(barrier.ChainQueue, after, chainVerifyBatch, func(_ barrier.Key, rest string) error {
				n++
				after = rest
				// <nanos>/<tid>/<id>
				if _, r, ok := strings.Cut(rest, "/"); ok && strings.HasPrefix(r, w.tid+"/") {
					w.unlinked++
				}
				return nil
			})
		})
		if err != nil || n < chainVerifyBatch {
			return err
		}
	}
}

func (w *chainVerifyWalk) problem(kind auditchain.ProblemKind, seq, last uint64, id, detail string) {
	w.own = append(w.own, auditchain.Problem{Kind: kind, Seq: seq, LastSeq: last, LineID: id, Detail: detail})
}

// readHead reads the tenant's registration and chain head. A head that
// does not open is reported (checkHead), and the walk goes on without it.
func (w *chainVerifyWalk) readHead(ctx context.Context) error {
	return w.work.View(ctx, func(t *unit.Tx) error {
		reg, err := t.Has(barrier.Tenant(w.tid).Registry())
		if err != nil {
			return err
		}
		if !reg {
			return unit.NotFoundError("tenant")
		}
		if _, err := t.TenantKeys(w.tid, false); err != nil {
			return err
		}
		w.head = Head{FirstSeq: 1}
		key := barrier.Tenant(w.tid).ChainHead()
		raw, err := t.GetWrapped(key)
		if err != nil || raw == nil {
			return err
		}
		var h Head
		if err := t.OpenRecord(key, raw, &h); err != nil {
			w.headAltered = true
			return nil
		}
		w.head, w.headOK = h, true
		w.head.FirstSeq = max(w.head.FirstSeq, 1)
		return nil
	})
}

// SeqEntry is one sequence index entry: a sequence number and the key
// suffix (<nanos>/<id>) of the line it names.
type SeqEntry struct {
	Seq    uint64
	Suffix string
}

// ParseSeqEntry reads rest, what follows TenantKeys.ChainSeqs in a key.
func ParseSeqEntry(rest string) (SeqEntry, bool) {
	s, suffix, ok := strings.Cut(rest, "/")
	if !ok || len(s) != 16 || strings.Count(suffix, "/") != 1 {
		return SeqEntry{}, false
	}
	seq, err := strconv.ParseUint(s, 16, 64)
	return SeqEntry{seq, suffix}, err == nil
}

// walkIndex walks the sequence index from the chain's first kept line to
// the head, feeding each line to the Verifier.
func (w *chainVerifyWalk) walkIndex(ctx context.Context) error {
	after := barrier.SeqKey(w.head.FirstSeq) // every entry of FirstSeq sorts after it
	for {
		n, done := 0, false
		err := w.work.View(ctx, func(t *unit.Tx) error {
			var entries []SeqEntry
			n, done = 0, false
			err := t.Scan(barrier.Tenant(w.tid).ChainSeqs(), after, chainVerifyBatch, func(_ barrier.Key, rest string) error {
				n++
				after = rest
				e, ok := ParseSeqEntry(rest)
				if !ok {
					w.problem(auditchain.Inserted, w.lastIndexed+1, 0, "", "a sequence index entry, "+strconv.Quote(rest)+", names no line")
					return nil
				}
				if w.headOK && e.Seq > w.head.Seq {
					done = true // written after the verification began
					return store.ErrStop
				}
				entries = append(entries, e)
				return nil
			})
			if err != nil {
				return err
			}
			for _, e := range entries {
				if err := w.indexed(t, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if done || n < chainVerifyBatch {
			w.onChain.seal()
			return nil
		}
	}
}

// indexed checks the line index entry e names and feeds it to the
// Verifier.
func (w *chainVerifyWalk) indexed(t *unit.Tx, e SeqEntry) error {
	w.onChain.add(e.Suffix, e.Seq)
	w.lastIndexed = max(w.lastIndexed, e.Seq)
	id := unit.KeyID(e.Suffix)
	rec, found, err := w.readLine(t, e.Suffix)
	switch {
	case err != nil:
		return err
	case !found:
		return nil // the Verifier reports the gap, report the tail
	case rec == nil:
		w.covered.add(e.Seq)
		w.problem(auditchain.Altered, e.Seq, 0, id, "the line's record does not open or decode: it was altered")
		return nil
	case rec.Link == nil:
		w.covered.add(e.Seq)
		w.problem(auditchain.Altered, e.Seq, 0, id, "the line holds no chain link")
		return nil
	case rec.Link.Seq != e.Seq:
		w.problem(auditchain.Reordered, e.Seq, 0, id,
			"the sequence index puts the line at "+strconv.FormatUint(e.Seq, 10)+"; it is line "+strconv.FormatUint(rec.Link.Seq, 10))
	}
	w.feed(e.Suffix, rec)
	return nil
}

// readLine reads the line at log/<suffix> with its link (withLink): found
// is false when it is gone, and rec nil when it, or its link record, does
// not open or decode.
func (w *chainVerifyWalk) readLine(t *unit.Tx, suffix string) (rec *LineRecord, found bool, err error) {
	key := barrier.Tenant(w.tid).Logs().Key(suffix)
	raw, err := t.GetWrapped(key)
	if err != nil || raw == nil {
		return nil, false, err
	}
	var r LineRecord
	if t.OpenRecord(key, raw, &r) != nil {
		return nil, true, nil
	}
	if err := WithLink(t, w.tid, suffix, &r); err != nil {
		if errors.Is(err, seal.ErrOpen) || errors.Is(err, unit.ErrRecord) {
			return nil, true, nil // its link record was altered
		}
		return nil, false, err
	}
	return &r, true, nil
}

// feed gives the Verifier the chained line rec, stored at log/<suffix>.
func (w *chainVerifyWalk) feed(suffix string, rec *LineRecord) {
	w.covered.add(rec.Link.Seq)
	if w.headOK && rec.Link.Seq == w.head.Seq && w.headLine == nil {
		h := rec.Link.Hash
		w.headLine = &h
	}
	w.ver.AddLine(auditchain.Entry{Seq: rec.Link.Seq, Prev: rec.Link.Prev, Hash: rec.Link.Hash,
		Line: ChainedLine(w.tid, unit.KeyID(suffix), rec)})
}

// checkHead reports a head the chain does not reach: the lines after the
// last one found, up to the head's, are missing (a truncated tail); and a
// head whose hash is not that of the line at its sequence number.
func (w *chainVerifyWalk) checkHead() {
	switch {
	case w.headAltered:
		w.problem(auditchain.Altered, w.lastIndexed, 0, "", "the chain head does not open: it was altered")
		return
	case !w.headOK && w.lastIndexed > 0:
		w.problem(auditchain.Missing, w.lastIndexed, 0, "", "the chain head is gone, though the sequence index holds lines")
		return
	case !w.headOK:
		return // no chain yet
	}
	// Lines below FirstSeq were pruned (retention), not lost: a chain
	// pruned to its head holds no line and is whole.
	if last := max(w.covered.max(), w.head.FirstSeq-1); last < w.head.Seq {
		w.problem(auditchain.Missing, max(last+1, w.head.FirstSeq), w.head.Seq, "",
			"the chain head counts these lines, which are not there")
	} else if w.headLine != nil && *w.headLine != w.head.Hash {
		w.problem(auditchain.BrokenLink, w.head.Seq, 0, "",
			"the chain head's hash is "+w.head.Hash.String()+", not this line's")
	}
}
