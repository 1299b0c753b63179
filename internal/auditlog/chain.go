package auditlog

import (
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The hash chain of the audit trail (docs/audit-chain.md; the format is
// package auditchain's).
//
// Each tenant's lines form one chain: line seq holds seq, the hash of
// line seq-1 and its own hash (Link, in its record), and the
// chain's head (Head, at tenant/<tid>/chain/head) holds the last
// seq and hash. A sequence index entry per line,
// chain/seq/<seq>/<nanos>/<id>, walks the chain in order by keys alone.
//
// # Beside the commit
//
// A call's commit writes its line once, with a chain queue entry of its
// own, sys/chainq/<nanos>/<tid>/<id> (QueueLine), and reads or writes
// nothing else of the chain: no head, no link, no checkpoint. So no two
// commits of a tenant, on one instance or several, write one row for the
// chain's sake. The linker (linker.go) links the queued lines in
// batches, beside the commits: one goroutine per Vault, working only
// while its instance holds the linker lease (internal/lease), each batch one
// transaction that re-reads the lease and goes on only in the epoch it
// holds, so two instances never both extend a chain (no forks). A batch
// takes the queue's oldest entries (by the key: the line's time, then
// tenant and id), and for each writes the line's link record
// (chain_link/<nanos>/<id>, record_chain.go), its sequence index entry,
// and removes the entry; then each moved head, and the checkpoints due
// (checkpoints.go). A line is written once, by its commit: the linker
// never writes it again. Its link is a record of its own, keyed like the
// line, where the verifier, the export and retention look it up from the
// line (WithLink); lines linked by older versions hold their link in
// their own record, and read the same.
//
// What the chain orders is the order in which the linker found the lines:
// the queue's key order at each batch, which is the commit order on one
// instance, and across instances the order of their lines' clocks at
// write time, up to lines committed late behind a batch (linked in the
// next). It is not a total order of the commits of several instances;
// what it proves is that no line linked so far was altered, removed,
// reordered or inserted since it was linked.
//
// A crash loses no committed line from the chain: its queue entry was
// committed with it, and the next holder of the lease (this process after
// a restart, or another instance once the lease expires) links it.
//
// Lines written before the chain existed are not chained: the head's
// Since is when the tenant's chain began, and a verifier reports the
// lines older than it apart.

// QueueLine queues tenant tid's line written at log/<suffix> for the
// linker: its chain queue entry, a key of its own, lands with it (on a
// store that appends, appended with it).
func QueueLine(t *unit.Tx, tid, suffix string) error {
	return t.AppendIndex(barrier.Tenant(tid).ChainQueueEntry(suffix))
}

// Chains is the chain heads a linking transaction read and moved, by
// tenant. The zero value is empty and ready to use.
type Chains struct {
	of    map[string]*Chain
	order []string // the tenants, in the order first read
}

// Chain is one tenant's chain in a linking transaction.
type Chain struct {
	Head  *Head
	Moved bool
	// From is the head's seq when read, and Since the time (TimeKey) of
	// the first line after its last checkpoint, when chained by this
	// transaction: for the unsigned mark (the root's checkpoints.go).
	From  uint64
	Since string
}

// Head returns tenant tid's chain, its head read in t on first use. A
// chain begun here begins at first (the time of its first line) or now,
// whichever is earlier: its lines were committed before they are linked.
func (c *Chains) Head(t *unit.Tx, tid string, first time.Time) (*Chain, error) {
	if s := c.of[tid]; s != nil {
		return s, nil
	}
	h := &Head{}
	ok, err := t.GetRecord(barrier.Tenant(tid).ChainHead(), h)
	if err != nil {
		return nil, err
	}
	if !ok {
		*h = Head{FirstSeq: 1, Since: t.Now}
		if !first.IsZero() && first.Before(t.Now) {
			h.Since = first
		}
	}
	return c.Add(tid, h), nil
}

// Add makes h tenant tid's head in c.
func (c *Chains) Add(tid string, h *Head) *Chain {
	if c.of == nil {
		c.of = map[string]*Chain{}
	}
	s := &Chain{Head: h, From: h.Seq}
	c.of[tid] = s
	c.order = append(c.order, tid)
	return s
}

// Of is tenant tid's chain in c, nil when c has not read it.
func (c *Chains) Of(tid string) *Chain { return c.of[tid] }

// Tenants are the tenants of c, in the order their heads were read.
func (c *Chains) Tenants() []string { return c.order }

// Link links the line rec, stored at log/<suffix> of tenant tid, to the
// end of the tenant's chain, in t: it writes the line's link record and
// sequence index entry, sets rec.Link, and leaves the line as its commit
// wrote it. The caller writes the moved heads.
func (c *Chains) Link(t *unit.Tx, tid, suffix string, rec *LineRecord) error {
	s, err := c.Head(t, tid, rec.CreatedAt)
	if err != nil {
		return err
	}
	h := s.Head
	link := Link{Seq: h.Seq + 1, Prev: h.Hash}
	line := ChainedLine(tid, unit.KeyID(suffix), rec)
	link.Hash = auditchain.LineHash(link.Prev, link.Seq, &line)
	rec.Link = &link
	if err := t.PutRecord(barrier.Tenant(tid).ChainLink(suffix), &link); err != nil {
		return err
	}
	if err := t.PutIndex(barrier.Tenant(tid).ChainSeq(link.Seq, suffix)); err != nil {
		return err
	}
	if link.Seq == h.SignedSeq+1 {
		s.Since, _, _ = strings.Cut(suffix, "/")
	}
	h.Seq, h.Hash = link.Seq, link.Hash
	s.Moved = true
	return nil
}

// WithLink sets rec.Link, for tenant tid's line rec stored at
// log/<suffix>, from the line's link record, unless the line holds its
// link itself (linked by an older version); rec.Link stays nil for a line
// not chained. Returns seal.ErrOpen or unit.ErrRecord (wrapped) for a link
// record that does not open or decode, and the store's errors.
func WithLink(t *unit.Tx, tid, suffix string, rec *LineRecord) error {
	if rec.Link != nil {
		return nil
	}
	var l Link
	ok, err := t.GetRecord(barrier.Tenant(tid).ChainLink(suffix), &l)
	if err != nil || !ok {
		return err
	}
	rec.Link = &l
	return nil
}

// ChainedLine is what the chain covers of the line rec of tenant tid
// with id id: the line, with the tenant and id its key holds.
func ChainedLine(tid, id string, rec *LineRecord) auditchain.Line {
	l := rec.Line
	l.TenantID, l.ID = tid, id
	return l
}
