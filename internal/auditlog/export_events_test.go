package auditlog

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
)

func TestCheckpointEventID(t *testing.T) {
	at := time.Date(2026, 11, 29, 11, 0, 0, 0, time.FixedZone("X", 3600))
	for _, final := range []bool{false, true} {
		c := auditchain.Checkpoint{TenantID: "t1", Seq: 42, CreatedAt: at, Final: final}
		ev := CheckpointEvent(c)
		want := "checkpoint-t1-000000000000002a"
		if final {
			want += "-final"
		}
		if ev.ID != want || ev.Schema != auditchain.CheckpointSchema || ev.TenantID != "t1" || ev.CreatedAt.Location() != time.UTC || ev.Checkpoint == nil || ev.Checkpoint.Seq != 42 {
			t.Errorf("CheckpointEvent(final %v) = %+v, want id %s", final, ev, want)
		}
	}
}

func TestLineEventCarriesTheLink(t *testing.T) {
	rec := &LineRecord{Line: auditchain.Line{EntityType: "token", EntityID: "e", Operation: "read", Message: "m", CreatedAt: time.Unix(1, 0).UTC()}}
	if ev := LineEvent("t1", "id1", rec); ev.TenantID != "t1" || ev.ID != "id1" || ev.Seq != 0 || ev.Hash != nil {
		t.Errorf("LineEvent of an unchained line = %+v", ev)
	}
	rec.Link = &Link{Seq: 7, Hash: auditchain.Hash{1}}
	if ev := LineEvent("t1", "id1", rec); ev.Seq != 7 || ev.Hash == nil || ev.PrevHash == nil {
		t.Errorf("LineEvent of a chained line = %+v", ev)
	}
}
