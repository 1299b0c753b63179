package auditlog

import (
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The linker's reads, ahead of a batch. Linking a line needs the line and
// whether it has a link record already; read one at a time, that is two
// reads a line, and on PostgreSQL each read is a round trip: a linker
// that links slower than the calls write leaves a backlog that only
// grows. So a linking transaction reads, for each tenant of its batch,
// the lines and the link records from the batch's first line on, with one
// scan of each (a few round trips of 256 rows), and falls back to a read
// of its own only for a line past what a scan covered.

// batchReads is what a linking transaction read ahead, by tenant.
type batchReads struct {
	of map[string]*tenantReads
}

// tenantReads is one tenant's part of a batchReads: its lines and link
// records from the batch's first line on, by line key suffix, and the
// last suffix each scan covered ("" when it reached the end of the
// tenant's keys: it covered everything after its start).
type tenantReads struct {
	lines                map[string]barrier.StoredValue
	linked               map[string]bool
	linesUpTo, linksUpTo string
}

// readBatch reads ahead for the chain queue entries rests (each
// <nanos>/<tid>/<id>): for each tenant, as many lines and link records
// from its first entry's time on as it has entries, twice over and 64
// more, so that the lines written between them (reads, other instances)
// seldom push one out. Returns the store's errors.
func readBatch(t *unit.Tx, rests []string) (*batchReads, error) {
	from, n := map[string]string{}, map[string]int{}
	var order []string
	for _, rest := range rests {
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) != 3 {
			continue
		}
		tid, nanos := parts[1], parts[0]
		if f, ok := from[tid]; !ok || nanos < f {
			if !ok {
				order = append(order, tid)
			}
			from[tid] = nanos
		}
		n[tid]++
	}
	r := &batchReads{of: map[string]*tenantReads{}}
	for _, tid := range order {
		limit := 2*n[tid] + 64
		tr := &tenantReads{lines: map[string]barrier.StoredValue{}, linked: map[string]bool{}}
		// After <nanos> itself: every key <nanos>/<id> sorts after it.
		lines, err := t.ScanValuesAfter(barrier.Tenant(tid).Logs(), from[tid], limit)
		if err != nil {
			return nil, err
		}
		for _, sv := range lines {
			tr.lines[sv.Rest] = sv
		}
		if len(lines) == limit {
			tr.linesUpTo = lines[len(lines)-1].Rest
		}
		links, err := t.ScanValuesAfter(barrier.Tenant(tid).ChainLinks(), from[tid], limit)
		if err != nil {
			return nil, err
		}
		for _, sv := range links {
			tr.linked[sv.Rest] = true
		}
		if len(links) == limit {
			tr.linksUpTo = links[len(links)-1].Rest
		}
		r.of[tid] = tr
	}
	return r, nil
}

// line is the line at suffix of tenant tid as read ahead: its raw value
// and true when the scan found it, nil and true when the scan covered its
// key and it is not there, and false when the scan did not reach it.
func (r *batchReads) line(tid, suffix string) (sv *barrier.StoredValue, known bool) {
	tr := r.of[tid]
	if tr == nil {
		return nil, false
	}
	if v, ok := tr.lines[suffix]; ok {
		return &v, true
	}
	return nil, tr.linesUpTo == "" || suffix <= tr.linesUpTo
}

// linked reports whether the line at suffix of tenant tid has a link
// record, as read ahead; known is false when the scan did not reach it.
func (r *batchReads) linked(tid, suffix string) (linked, known bool) {
	tr := r.of[tid]
	if tr == nil {
		return false, false
	}
	if tr.linked[suffix] {
		return true, true
	}
	return false, tr.linksUpTo == "" || suffix <= tr.linksUpTo
}
