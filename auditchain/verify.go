package auditchain

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Entry is one chained line as a copy of the trail holds it: its link
// (Seq, Prev, Hash) and its content.
type Entry struct {
	Seq  uint64
	Prev Hash
	Hash Hash
	Line Line
}

// ProblemKind names what a verification found wrong.
type ProblemKind string

// The problems a verification reports. Each names the first sequence
// number concerned (Problem.Seq) and, for a range, the last.
const (
	// Altered: the line's content does not hash to the hash it carries,
	// or it could not be read at all (a store walk: a record that does
	// not open).
	Altered ProblemKind = "altered"
	// BrokenLink: the line's prev is not the hash of the line before it
	// (or not zeros for the first line): a line before it was altered,
	// replaced or reordered.
	BrokenLink ProblemKind = "broken_link"
	// Missing: no line holds the sequence numbers Seq to LastSeq, which
	// the chain had (a gap, or a tail a checkpoint vouches for).
	Missing ProblemKind = "missing"
	// Fork: two different lines carry the same sequence number.
	Fork ProblemKind = "fork"
	// Reordered: a line is stored at another place in the chain than
	// its own sequence number says (a store walk).
	Reordered ProblemKind = "reordered"
	// Inserted: a line that is not on the chain although written after
	// the chain began (a store walk).
	Inserted ProblemKind = "inserted"
	// BadCheckpoint: a checkpoint whose signature does not verify, whose
	// key is unknown, which names another tenant, or whose hash is not
	// the chain's at its sequence number.
	BadCheckpoint ProblemKind = "bad_checkpoint"
	// Unanchored: the copy starts after the chain's first line
	// (Verifier.ExpectFirst) and no valid checkpoint vouches for the
	// line before it.
	Unanchored ProblemKind = "unanchored_start"
	// AfterFinal: lines follow the final checkpoint of a deleted tenant.
	AfterFinal ProblemKind = "after_final"
	// UnsignedTail: the lines Seq to LastSeq follow the last valid
	// checkpoint; nothing signed vouches that they are all there.
	UnsignedTail ProblemKind = "unsigned_tail"
)

// Problem is one thing a verification found wrong.
type Problem struct {
	Kind ProblemKind `json:"kind"`
	// Seq is the first sequence number concerned; LastSeq the last, for
	// a range (0 otherwise).
	Seq     uint64 `json:"seq"`
	LastSeq uint64 `json:"last_seq,omitempty"`
	// LineID is the id of the line concerned, when there is one.
	LineID string `json:"line_id,omitempty"`
	Detail string `json:"detail"`
}

func (p Problem) String() string {
	at := fmt.Sprintf("seq %d", p.Seq)
	if p.LastSeq > p.Seq {
		at = fmt.Sprintf("seq %d-%d", p.Seq, p.LastSeq)
	}
	if p.LineID != "" {
		at += " (line " + p.LineID + ")"
	}
	return fmt.Sprintf("%s at %s: %s", p.Kind, at, p.Detail)
}

// Report is the outcome of a verification.
type Report struct {
	TenantID string `json:"tenant_id"`
	// OK is true when there is no problem.
	OK bool `json:"ok"`
	// Lines is how many distinct lines were verified; FirstSeq and
	// LastSeq the range they span, and Head the last one's hash.
	Lines    int    `json:"lines"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Head     Hash   `json:"head"`
	// Checkpoints is how many checkpoints verified; SignedThrough the
	// last sequence number a valid checkpoint vouches for.
	Checkpoints   int    `json:"checkpoints"`
	SignedThrough uint64 `json:"signed_through"`
	// Final is true when a valid final checkpoint closes the chain.
	Final bool `json:"final,omitempty"`
	// Problems lists what is wrong, in order of sequence number, then
	// of kind.
	Problems []Problem `json:"problems"`
	// Unlinked is how many of the tenant's lines were committed and not
	// linked yet when a store verification began (the vault links lines
	// beside their commits, within seconds): not yet covered by this
	// report, and not a problem. Always 0 for a Verifier fed from an
	// export, which carries linked lines only.
	Unlinked int `json:"unlinked,omitempty"`
}

// digest is what a Verifier keeps of a line: enough to check links and
// checkpoints once every line is in, about 100 bytes however long the
// line.
type digest struct {
	seq        uint64
	prev, hash Hash
	id         string
	at         int64 // created_at, in Unix nanoseconds
}

// unchained is a line of the tenant that carries no link: its id and
// created_at in Unix nanoseconds.
type unchained struct {
	id string
	at int64
}

// Verifier verifies one tenant's chain from its lines and checkpoints,
// given in any order and with duplicates (an audit export delivers at
// least once). Add every line and checkpoint, then call Report. It keeps
// about 100 bytes per line, so a million lines take about 100 MB.
type Verifier struct {
	// ExpectFirst is the sequence number the copy must start at: 1 for a
	// whole chain, the chain's first kept line after retention pruned
	// it (then a checkpoint at ExpectFirst-1 must anchor it), or 0 to
	// accept wherever the copy starts (a sink added after the chain
	// began). 0 waives only where the copy starts, not that it holds
	// what the checkpoints in it vouch for: from its first line on,
	// every line through the last one a valid checkpoint names must be
	// there, and a copy with no line at all beside such a checkpoint
	// misses at least that line (Missing at the checkpoint's seq): an
	// export with its lines removed does not verify as complete.
	ExpectFirst uint64

	tenant      string
	keys        map[string]PublicKey
	lines       []digest
	unchained   []unchained
	checkpoints []Checkpoint
	problems    []Problem
}

// NewVerifier returns a Verifier of tenant tenantID's chain, trusting the
// checkpoint signing keys keys.
func NewVerifier(tenantID string, keys []PublicKey) *Verifier {
	v := &Verifier{tenant: tenantID, keys: map[string]PublicKey{}}
	for _, k := range keys {
		v.keys[KeyID(k.Key)] = k
	}
	return v
}

// AddLine adds a chained line. A line of another tenant, or whose content
// does not hash to its Hash, is a problem (Altered); it is kept for the
// links, so the line after it is not reported too.
func (v *Verifier) AddLine(e Entry) {
	if e.Line.TenantID != v.tenant {
		v.AddProblem(Problem{Kind: Altered, Seq: e.Seq, LineID: e.Line.ID, Detail: "the line is of tenant " + e.Line.TenantID})
	} else if got := LineHash(e.Prev, e.Seq, &e.Line); got != e.Hash {
		v.AddProblem(Problem{Kind: Altered, Seq: e.Seq, LineID: e.Line.ID,
			Detail: "the line's content hashes to " + got.String() + ", not to the hash it carries"})
	}
	v.lines = append(v.lines, digest{seq: e.Seq, prev: e.Prev, hash: e.Hash, id: e.Line.ID, at: e.Line.CreatedAt.UnixNano()})
}

// AddUnchained adds a line of the tenant that carries no link (no seq,
// prev_hash or hash). Lines written before the tenant's chain began are
// such lines, and nothing vouches for them; one dated at or after the
// first chained line the copy holds was not written by the vault that
// way (every line since is linked before it is exported), so Report
// finds it Inserted, at the seq after the last chained line dated at or
// before it. Without this a forged line given no link would be skipped
// by the verifier while every other reader of the copy shows it.
func (v *Verifier) AddUnchained(id string, createdAt time.Time) {
	v.unchained = append(v.unchained, unchained{id: id, at: createdAt.UnixNano()})
}

// AddCheckpoint adds a checkpoint.
func (v *Verifier) AddCheckpoint(c Checkpoint) { v.checkpoints = append(v.checkpoints, c) }

// AddProblem adds a problem its caller found where only it can look: a
// store walk reports a record that does not open, a line off the chain,
// an index entry out of place.
func (v *Verifier) AddProblem(p Problem) { v.problems = append(v.problems, p) }

// Report verifies what was added and reports. It may be called once.
func (v *Verifier) Report() *Report {
	r := &Report{TenantID: v.tenant}
	lines := v.distinctLines()
	if len(lines) > 0 {
		first, last := lines[0], lines[len(lines)-1]
		r.Lines, r.FirstSeq, r.LastSeq, r.Head = len(lines), first.seq, last.seq, last.hash
	}
	if v.ExpectFirst > 0 && len(lines) > 0 && lines[0].seq > v.ExpectFirst {
		v.AddProblem(Problem{Kind: Missing, Seq: v.ExpectFirst, LastSeq: lines[0].seq - 1,
			Detail: "the chain starts with these lines, which are not there"})
	}
	for i, l := range lines {
		switch {
		case i == 0 && l.seq == 1 && !l.prev.IsZero():
			v.AddProblem(Problem{Kind: BrokenLink, Seq: 1, LineID: l.id, Detail: "the first line's prev is not zeros"})
		case i == 0:
		case l.seq > lines[i-1].seq+1:
			v.AddProblem(Problem{Kind: Missing, Seq: lines[i-1].seq + 1, LastSeq: l.seq - 1, Detail: "no line holds these sequence numbers"})
		case l.prev != lines[i-1].hash:
			v.AddProblem(Problem{Kind: BrokenLink, Seq: l.seq, LineID: l.id,
				Detail: "its prev is not the hash of line " + fmt.Sprint(lines[i-1].seq)})
		}
	}
	v.checkUnchained(lines)
	v.checkCheckpoints(r, lines)
	if r.LastSeq > r.SignedThrough && !r.Final {
		v.AddProblem(Problem{Kind: UnsignedTail, Seq: max(r.SignedThrough+1, r.FirstSeq), LastSeq: r.LastSeq,
			Detail: "no checkpoint vouches for these lines yet"})
	}
	slices.SortStableFunc(v.problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Kind, b.Kind))
	})
	r.Problems = v.problems
	if r.Problems == nil {
		r.Problems = []Problem{}
	}
	r.OK = len(r.Problems) == 0
	return r
}

// checkUnchained reports every unchained line dated at or after the
// first chained line in lines (sorted by seq) as Inserted (AddUnchained).
func (v *Verifier) checkUnchained(lines []digest) {
	if len(lines) == 0 {
		return
	}
	began := lines[0].at
	for _, l := range lines {
		began = min(began, l.at)
	}
	for _, u := range v.unchained {
		if u.at < began {
			continue // written before the chain began
		}
		at := lines[0].seq
		for _, l := range lines {
			if l.at <= u.at {
				at = l.seq + 1
			}
		}
		v.AddProblem(Problem{Kind: Inserted, Seq: at, LineID: u.id,
			Detail: "a line of the tenant with no link, dated after the chain began: the vault links every such line"})
	}
}

// distinctLines sorts the lines by sequence number and drops exact
// duplicates; two different lines with one number are a Fork, and the
// first stays.
func (v *Verifier) distinctLines() []digest {
	lines := v.lines
	slices.SortStableFunc(lines, func(a, b digest) int { return cmp.Compare(a.seq, b.seq) })
	out := lines[:0]
	for _, l := range lines {
		if n := len(out); n > 0 && out[n-1].seq == l.seq {
			if out[n-1] != l {
				v.AddProblem(Problem{Kind: Fork, Seq: l.seq, LineID: l.id, Detail: "another line, " + out[n-1].id + ", has this sequence number"})
			}
			continue
		}
		out = append(out, l)
	}
	return out
}

// checkCheckpoints verifies each checkpoint's signature and that the
// chain holds its head, and sets r's checkpoint fields.
func (v *Verifier) checkCheckpoints(r *Report, lines []digest) {
	at := func(seq uint64) (digest, bool) {
		i, ok := slices.BinarySearchFunc(lines, seq, func(d digest, s uint64) int { return cmp.Compare(d.seq, s) })
		if !ok {
			return digest{}, false
		}
		return lines[i], true
	}
	anchored := v.ExpectFirst <= 1 || len(lines) == 0 || lines[0].seq != v.ExpectFirst
	seen := map[uint64]bool{}
	var beyond uint64 // the last seq a valid checkpoint names after the last line
	for _, c := range v.checkpoints {
		if err := v.checkSignature(&c); err != "" {
			v.AddProblem(Problem{Kind: BadCheckpoint, Seq: c.Seq, Detail: err})
			continue
		}
		if !seen[c.Seq] {
			seen[c.Seq] = true
			r.Checkpoints++
		}
		if len(lines) > 0 && c.Seq+1 == lines[0].seq && c.Hash == lines[0].prev {
			anchored = true
		}
		if c.Final && c.Seq < r.LastSeq {
			v.AddProblem(Problem{Kind: AfterFinal, Seq: c.Seq + 1, LastSeq: r.LastSeq, Detail: "the tenant's final checkpoint covers only the lines before these"})
		}
		switch l, ok := at(c.Seq); {
		case ok && l.hash != c.Hash:
			v.AddProblem(Problem{Kind: BadCheckpoint, Seq: c.Seq, LineID: l.id,
				Detail: "the chain's hash here is " + l.hash.String() + ", the checkpoint signed " + c.Hash.String()})
			continue
		case !ok && c.Seq > r.LastSeq && (len(lines) > 0 || c.Seq >= max(v.ExpectFirst, 1)):
			beyond = max(beyond, c.Seq) // the tail is gone: reported once, below
			continue
		case !ok:
			continue // before the copy starts, or inside a gap already reported
		}
		r.SignedThrough = max(r.SignedThrough, c.Seq)
		r.Final = r.Final || (c.Final && c.Seq == r.LastSeq)
	}
	if beyond > 0 {
		from := r.LastSeq + 1
		if len(lines) == 0 {
			// No line at all: from where the copy had to start or, when
			// it could start anywhere, at least the last line signed.
			from = v.ExpectFirst
			if from == 0 {
				from = beyond
			}
		}
		v.AddProblem(Problem{Kind: Missing, Seq: from, LastSeq: beyond,
			Detail: "a checkpoint vouches for these lines, which are not there"})
	}
	if !anchored {
		v.AddProblem(Problem{Kind: Unanchored, Seq: lines[0].seq, LineID: lines[0].id,
			Detail: "no valid checkpoint vouches for the line before the chain's first"})
	}
}

// checkSignature returns why c does not verify, or "".
func (v *Verifier) checkSignature(c *Checkpoint) string {
	if c.TenantID != v.tenant {
		return "the checkpoint is of tenant " + c.TenantID
	}
	k, ok := v.keys[c.KeyID]
	if !ok {
		return "the checkpoint is signed with key " + c.KeyID + ", which is not a trusted key"
	}
	if c.VerifySignature(k.Key) != nil {
		return "the checkpoint's signature does not verify with key " + c.KeyID
	}
	return ""
}
