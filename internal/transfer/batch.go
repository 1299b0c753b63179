package transfer

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// MsgBatch starts the message of a batch's audit line.
const MsgBatch = "Tokens imported"

// MaxBatch is how many lines one batch may hold: a batch is one
// transaction, and its rejects come back in one answer.
const MaxBatch = 1000

// MaxCreatedAtSkew is how far in the future a kept created_at may be (the
// source's clock may run a little ahead of the vault's).
const MaxCreatedAtSkew = 5 * time.Minute

// Reject is a line that was not imported: its line number and why, never
// its data.
type Reject struct {
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
}

// Result is what a batch did: how many lines created a token, how many
// were the same token already (a resumed import), and the lines rejected.
type Result struct {
	Imported int      `json:"imported"`
	Skipped  int      `json:"skipped"`
	Rejected int      `json:"rejected"`
	Rejects  []Reject `json:"rejects"`
}

// Prepared is a batch validated without the store: the lines to create
// and the lines already rejected.
type Prepared struct {
	lines   []*tokens.Prepared
	numbers []int64
	rejects []Reject
}

// Prepare validates each line as a token request (svc.Prepare, as a
// tokenize does, now being the vault's time) and its id (IDProblem). A
// line already rejected (Line.Problem), a line that is not valid, and a
// line whose id an earlier line of the batch took, become rejects.
func Prepare(svc *tokens.Service, lines []Line, now time.Time) *Prepared {
	b := &Prepared{}
	seen := make(map[string]bool, len(lines))
	for _, l := range lines {
		reason := l.Problem
		var pt *tokens.Prepared
		if reason == "" {
			pt, reason = prepareLine(svc, l, now)
		}
		if reason == "" && seen[pt.ID] {
			reason = "id: given by an earlier line of the batch"
		}
		if reason != "" {
			b.rejects = append(b.rejects, Reject{Line: l.Number, Reason: reason})
			continue
		}
		seen[pt.ID] = true
		b.lines = append(b.lines, pt)
		b.numbers = append(b.numbers, l.Number)
	}
	return b
}

func prepareLine(svc *tokens.Service, l Line, now time.Time) (*tokens.Prepared, string) {
	fe := unit.FieldErrors{}
	if p := tokens.CustomIDProblem(l.ID); p != "" {
		return nil, "id: " + p
	}
	if l.CreatedAt != nil && l.CreatedAt.After(now.Add(MaxCreatedAtSkew)) {
		return nil, "created_at: is in the future"
	}
	req := tokens.Request{
		ID: l.ID, Type: l.Type, Data: l.Data, Mask: l.Mask, Containers: l.Containers,
		Metadata: l.Metadata, SearchIndexes: l.SearchIndexes,
		FingerprintExpression: l.FingerprintExpression, ExpiresAt: l.ExpiresAt, Subject: l.Subject,
	}
	pt := svc.Prepare(req, now, now, "", true, fe)
	if len(fe) > 0 {
		return nil, firstProblem(fe)
	}
	if p := IDProblem(l.ID, l.Type, pt.Data); p != "" {
		return nil, p
	}
	pt.CreatedAt = l.CreatedAt
	return pt, ""
}

// firstProblem is one line's reason from its field errors: the first
// path in order, with its first message.
func firstProblem(fe unit.FieldErrors) string {
	paths := make([]string, 0, len(fe))
	for p := range fe {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	p := paths[0]
	msg := strings.Join(fe[p], "; ")
	if p == "" {
		return msg
	}
	return p + ": " + msg
}

// Commit creates the prepared lines in t (svc.Import each), p being the
// importing key, and logs the batch's own line. A line refused in the
// transaction (no token:create on its containers, its id taken by another
// token) is rejected and the rest carries on: Import refuses before it
// writes. Any other error is returned and must abort t, so that the batch
// commits whole or not at all.
func (b *Prepared) Commit(t *unit.Tx, p *access.Principal, svc *tokens.Service) (*Result, error) {
	r := &Result{Rejects: append([]Reject{}, b.rejects...)}
	for i, pt := range b.lines {
		out, err := svc.Import(t, p, pt)
		switch unit.ErrorKind(err) {
		case unit.PermissionDenied:
			r.Rejects = append(r.Rejects, Reject{Line: b.numbers[i], Reason: "containers: the key lacks token:create there"})
			continue
		case unit.Conflict:
			r.Rejects = append(r.Rejects, Reject{Line: b.numbers[i], Reason: "id: exists, with other contents"})
			continue
		}
		if err != nil {
			return nil, err
		}
		if out == tokens.Skipped {
			r.Skipped++
		} else {
			r.Imported++
		}
	}
	sort.SliceStable(r.Rejects, func(i, j int) bool { return r.Rejects[i].Line < r.Rejects[j].Line })
	r.Rejected = len(r.Rejects)
	// One line for the batch beside each token's own "Token created": the
	// operator sees the import as such, and its rejects, which create
	// nothing and have no line of their own.
	msg := fmt.Sprintf("%s: %d imported, %d skipped, %d rejected", MsgBatch, r.Imported, r.Skipped, r.Rejected)
	if err := t.Log(p.Actor(), p.TenantID, unit.EntityToken, "", unit.OpCreate, msg); err != nil {
		return nil, err
	}
	return r, nil
}
