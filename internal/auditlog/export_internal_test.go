package auditlog

import (
	"context"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/auditchain"
)

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

// namedSink is a Sink that only has a name.
type namedSink string

func (s namedSink) Name() string { return string(s) }

func (namedSink) Deliver(context.Context, []auditchain.Event) error { return nil }

// TestCheckSinks: Open refuses a nil sink, a name outside 1 to 32 of
// a-z, 0-9, _ and -, and two sinks of one name, with these messages.
func TestCheckSinks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sinks []Sink
		want  string
	}{
		{"none", nil, ""},
		{"valid", []Sink{namedSink("file"), namedSink("http_2-b")}, ""},
		{"nil", []Sink{namedSink("file"), nil}, "tokenvault: Options.AuditExport.Sinks holds a nil sink"},
		{"empty name", []Sink{namedSink("")}, `tokenvault: audit sink name "" must be 1 to 32 of a-z, 0-9, _ and -`},
		{"upper case", []Sink{namedSink("File")}, `tokenvault: audit sink name "File" must be 1 to 32 of a-z, 0-9, _ and -`},
		{"too long", []Sink{namedSink(strings.Repeat("a", 33))}, `tokenvault: audit sink name "` + strings.Repeat("a", 33) + `" must be 1 to 32 of a-z, 0-9, _ and -`},
		{"twice", []Sink{namedSink("file"), namedSink("file")}, `tokenvault: two audit sinks are named "file"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSinks(tc.sinks)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("CheckSinks() = %q, want %q", got, tc.want)
			}
		})
	}
}
