package auditlog

import "testing"

// TestAuditRecountKeepsLinesCountedMeanwhile: a recount from a read of the
// queue does not drop lines counted after the read began (they may not be
// among what it saw), and does correct the count when none were.
func TestAuditRecountKeepsLinesCountedMeanwhile(t *testing.T) {
	e := &sinkExporter{}
	e.count(2)
	since := e.committedCounts()
	// The exporter reads the queue: 2 lines. Meanwhile one more commits.
	e.count(1)
	e.recount(2, since)
	if p := e.pending.Load(); p != 3 {
		t.Fatalf("pending %d after a line counted during the read, want 3", p)
	}
	// A quiet read corrects an over-count (lines deleted with their tenant).
	since = e.committedCounts()
	e.recount(1, since)
	if p := e.pending.Load(); p != 1 {
		t.Fatalf("pending %d after a quiet recount of 1, want 1", p)
	}
}
