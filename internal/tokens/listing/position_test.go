package listing

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestPositions: a packed position names its id back, orders by time
// then id, and its cursor text packs back to it; cursor texts that name
// no position are refused.
func TestPositions(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 5, time.UTC)
	id := uuid.Must(uuid.NewV7()).String()
	var packed []string
	for _, tc := range []struct {
		at time.Time
		id string
	}{
		{at, id},
		{at, "custom-id"},
		{at.Add(time.Nanosecond), id},
		{at.Add(-time.Hour), "custom-id"},
	} {
		pos := packPosition(tc.at, tc.id)
		if got, ok := positionID(pos); !ok || got != tc.id {
			t.Errorf("positionID(packPosition(%v, %q)) = %q, %v", tc.at, tc.id, got, ok)
		}
		c := cursorPosition(pos)
		if back, ok := packCursor(c); !ok || back != pos {
			t.Errorf("packCursor(%q) = %q, %v; want the packed position back", c, back, ok)
		}
		packed = append(packed, pos)
	}
	if len(packed[0]) != 25 {
		t.Errorf("a generated id packs in %d bytes, want 25", len(packed[0]))
	}
	want := []string{packed[3], packed[0], packed[1], packed[2]} // time, then generated before custom
	if slices.Sort(packed); !slices.Equal(packed, want) {
		t.Error("packed positions do not sort by time, then generated id before custom id")
	}
	for _, c := range []string{"", "0123456789abcdef", "0123456789abcdef-x", "0123456789ABCDEF/x", "0123456789abcdeg/x"} {
		if pos, ok := packCursor(c); ok {
			t.Errorf("packCursor(%q) = %q, true; want false", c, pos)
		}
	}
	for _, pos := range []string{"", "12345678", "12345678\x00short"} {
		if id, ok := positionID(pos); ok {
			t.Errorf("positionID(%q) = %q, true; want false", pos, id)
		}
	}
	if c := cursorPosition(packPosition(at, "x")); !strings.HasSuffix(c, "/x") || len(c) != 18 {
		t.Errorf("cursorPosition = %q, want <16 hex digits>/x", c)
	}
}
