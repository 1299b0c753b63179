package auditlog

import (
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestIndexerLaterOnlyForReads: a line gets a pending entry instead of its
// index entry only for a read, on a store that takes them, with a line key
// and an entity type that fits the entry; every other line is indexed with
// its write (Later reports false and writes nothing, so it needs no Tx).
func TestIndexerLaterOnlyForReads(t *testing.T) {
	suffix := strings.Repeat("0", SuffixLen)
	for _, tc := range []struct {
		name                string
		later               bool
		typ, op, lineSuffix string
	}{
		{"store indexes every line with its write", false, unit.EntityToken, unit.OpRead, suffix},
		{"not a read", true, unit.EntityToken, unit.OpUpdate, suffix},
		{"no entity type", true, "", unit.OpRead, suffix},
		{"entity type with a slash", true, "a/b", unit.OpRead, suffix},
		{"not a line key", true, unit.EntityToken, unit.OpRead, "short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := NewIndexer(IndexerConfig{Later: tc.later})
			if ok, err := x.Later(nil, "tenant", tc.typ, "id", tc.op, tc.lineSuffix); ok || err != nil {
				t.Errorf("Later(%q, %q, %q) = %v, %v; want false, nil", tc.typ, tc.op, tc.lineSuffix, ok, err)
			}
		})
	}
}

// TestIndexerTakeUnmarks: a pass takes every marked tenant once, each once
// however often it was marked, and leaves none marked.
func TestIndexerTakeUnmarks(t *testing.T) {
	x := NewIndexer(IndexerConfig{})
	x.mark("a")
	x.mark("b")
	x.mark("a")
	got := x.take()
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("take() = %v, want [a b]", got)
	}
	if got := x.take(); len(got) != 0 {
		t.Fatalf("take() after a take = %v, want none", got)
	}
}
