package auditlog

import (
	"slices"
	"testing"
	"time"
)

func TestPackSuffix(t *testing.T) {
	var packed []string
	var texts []string
	for _, s := range []string{
		"0000000000000000/00000000-0000-0000-0000-000000000000",
		"1a4740d36bccff15/0190f5a2-9000-7000-8000-000000000009",
		"1a4740d36bccff15/0190f5a2-9000-7000-8000-00000000000a",
		"1a4740d36bcd0000/0190f5a2-9000-7000-8000-000000000001",
		"7fffffffffffffff/ffffffff-ffff-ffff-ffff-ffffffffffff",
	} {
		p, ok := PackSuffix(s)
		if !ok || len(p) != PackedLen {
			t.Fatalf("PackSuffix(%q) = %x, %v", s, p, ok)
		}
		if got := UnpackSuffix([]byte(p)); got != s {
			t.Errorf("UnpackSuffix(PackSuffix(%q)) = %q", s, got)
		}
		packed, texts = append(packed, p), append(texts, s)
	}
	if !slices.IsSorted(packed) || !slices.IsSorted(texts) {
		t.Error("packed suffixes do not sort as their text")
	}
	for _, bad := range []string{"", "1a4740d36bccff15/0190F5A2-9000-7000-8000-000000000009", "1a4740d36bccff1g/0190f5a2-9000-7000-8000-000000000009", "1a4740d36bccff15-0190f5a2-9000-7000-8000-000000000009"} {
		if _, ok := PackSuffix(bad); ok {
			t.Errorf("PackSuffix(%q) packed", bad)
		}
	}
}

func TestParsePending(t *testing.T) {
	s := "1a4740d36bccff15/0190f5a2-9000-7000-8000-000000000009"
	for _, tc := range []struct {
		rest string
		want PendingEntry
		ok   bool
	}{
		{s + "/token/abc", PendingEntry{Suffix: s, Type: "token", ID: "abc"}, true},
		{s + "/token/", PendingEntry{Suffix: s, Type: "token"}, true},
		{s + "//abc", PendingEntry{Suffix: s, ID: "abc"}, false},
		{s + "/token", PendingEntry{}, false},
		{s, PendingEntry{}, false},
		{"short/token/abc", PendingEntry{}, false},
	} {
		got, ok := ParsePending(tc.rest)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParsePending(%q) = %+v, %v, want %+v, %v", tc.rest, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPackedBound(t *testing.T) {
	s := "1a4740d36bccff15/0190f5a2-9000-7000-8000-000000000009"
	p, _ := PackSuffix(s)
	at := time.Unix(0, 0x1a4740d36bccff15).UTC()
	for _, tc := range []struct {
		before, want string
	}{
		{"", ""},
		{s, p},
		{"1a4740d36bccff15", p[:8]},
		{"1a4740d36bccff15/", "\x1a\x47\x40\xd3\x6b\xcc\xff\x16"},
		{"1a4740d36bccff1", ""},
		{"1a4740d36bccff1g", ""},
		{"ffffffffffffffff/", ""},
	} {
		if got := PackedBound(tc.before); got != tc.want {
			t.Errorf("PackedBound(%q) = %x, want %x", tc.before, got, tc.want)
		}
	}
	if got := TimeKeyNanos(uint64(at.UnixNano())); got != "1a4740d36bccff15/" {
		t.Errorf("TimeKeyNanos = %q", got)
	}
}
