package auditlog

import (
	"fmt"
	"slices"
	"testing"
)

func TestSeqSet(t *testing.T) {
	var s seqSet
	for _, seq := range []uint64{1, 2, 3, 7, 5, 6, 9, 2, 4} {
		s.add(seq)
	}
	if want := []seqRange{{1, 7}, {9, 9}}; !slices.Equal(s.ranges, want) {
		t.Errorf("ranges = %v, want %v", s.ranges, want)
	}
	for seq, want := range map[uint64]bool{0: false, 1: true, 4: true, 7: true, 8: false, 9: true, 10: false} {
		if got := s.has(seq); got != want {
			t.Errorf("has(%d) = %v, want %v", seq, got, want)
		}
	}
	if got := s.max(); got != 9 {
		t.Errorf("max() = %d, want 9", got)
	}
	var empty seqSet
	if empty.max() != 0 || empty.has(0) {
		t.Error("an empty seqSet holds something")
	}
}

func TestSuffixSet(t *testing.T) {
	var s suffixSet
	for i := range 100 {
		s.add(fmt.Sprintf("%016x/line-%d", i, i), uint64(i+1))
	}
	s.seal()
	for i := range 100 {
		if seq, ok := s.get(fmt.Sprintf("%016x/line-%d", i, i)); !ok || seq != uint64(i+1) {
			t.Errorf("get(line %d) = %d, %v", i, seq, ok)
		}
	}
	if _, ok := s.get("0000000000000000/absent"); ok {
		t.Error("get(absent) found a line")
	}
	// Added after seal: get sorts again.
	s.add("late", 500)
	if seq, ok := s.get("late"); !ok || seq != 500 {
		t.Errorf("get(late) = %d, %v", seq, ok)
	}
}

func TestParseSeqEntry(t *testing.T) {
	suffix := "1a4740d36bccff15/0190f5a2-9000-7000-8000-000000000009"
	for _, tc := range []struct {
		rest string
		want SeqEntry
		ok   bool
	}{
		{"000000000000002a/" + suffix, SeqEntry{42, suffix}, true},
		{"2a/" + suffix, SeqEntry{}, false},
		{"000000000000002a", SeqEntry{}, false},
		{"000000000000002a/1a4740d36bccff15", SeqEntry{}, false},
		{"00000000000000zz/" + suffix, SeqEntry{}, false},
	} {
		got, ok := ParseSeqEntry(tc.rest)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParseSeqEntry(%q) = %+v, %v, want %+v, %v", tc.rest, got, ok, tc.want, tc.ok)
		}
	}
}
