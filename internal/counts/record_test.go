package counts

import (
	"testing"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// TestCodec holds the count's record to its format: version 1 round
// trips, version 0's JSON still reads, and what does not parse is an
// error, not a count.
func TestCodec(t *testing.T) {
	k := barrier.Tenant("0190f5a2-9000-7000-8000-000000000001").Count("token")
	for _, n := range []int64{0, 1, -5, 1234567, -1 << 62} {
		b := Codec{}.EncodeCount(k, n)
		if b[0] != format {
			t.Errorf("EncodeCount(%d)[0] = %#x, want %#x", n, b[0], format)
		}
		got, err := Codec{}.DecodeCount(k, b)
		if err != nil || got != n {
			t.Errorf("DecodeCount(EncodeCount(%d)) = %d, %v", n, got, err)
		}
	}
	if got, err := (Codec{}).DecodeCount(k, []byte(`{"n":42}`)); err != nil || got != 42 {
		t.Errorf("DecodeCount(version 0) = %d, %v, want 42", got, err)
	}
	for _, bad := range [][]byte{nil, {2, 0}, {format}, {format, 2, 0}, []byte(`{"n":"x"}`)} {
		if got, err := (Codec{}).DecodeCount(k, bad); err == nil {
			t.Errorf("DecodeCount(%q) = %d, nil, want an error", bad, got)
		}
	}
}
