package lease

import (
	"errors"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestRecordRoundTrip(t *testing.T) {
	key := barrier.Lease(Linker)
	for _, r := range []Record{
		{Holder: "0123456789abcdef", Epoch: 3, Expires: time.Date(2026, 11, 29, 10, 0, 0, 5, time.UTC)},
		{Holder: "0123456789abcdef", Epoch: 4}, // released
	} {
		b, err := r.AppendRecord(nil, key)
		if err != nil {
			t.Fatal(err)
		}
		var got Record
		if err := got.DecodeRecord(key, b); err != nil || got.Holder != r.Holder || got.Epoch != r.Epoch || !got.Expires.Equal(r.Expires) {
			t.Errorf("DecodeRecord(AppendRecord(%+v)) = %+v, %v", r, got, err)
		}
		if err := got.DecodeRecord(key, append(b, 0)); !errors.Is(err, unit.ErrRecord) || got != (Record{}) {
			t.Errorf("DecodeRecord with a trailing byte = %+v, %v; want unit.ErrRecord and nothing", got, err)
		}
	}
}

func TestErrLostIsAConflict(t *testing.T) {
	if !errors.Is(ErrLost, Lost) || ErrLost.Kind != unit.Conflict {
		t.Errorf("ErrLost = %v (kind %v); want a Conflict wrapping Lost", ErrLost, ErrLost.Kind)
	}
}
