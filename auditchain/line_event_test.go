package auditchain

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLineEventCarriesTheLine: a line exported (LineEvent) and read back
// (Event.Line) is the same line, every field of it, with its link on the
// event when it has one and none when it has not.
func TestLineEventCarriesTheLine(t *testing.T) {
	l := Line{TenantID: "t", ID: "i", CreatedAt: time.Date(2026, 11, 29, 10, 0, 0, 5, time.UTC),
		ActorID: "a", ActorType: "application", EntityType: "card", EntityID: "e", Operation: "read",
		Message: "m", Transform: "mask", Channel: "list", Application: "app"}
	unchained := LineEvent(Entry{Line: l})
	if unchained.Schema != LineSchema || unchained.Seq != 0 || unchained.PrevHash != nil || unchained.Hash != nil {
		t.Errorf("unchained line's event: %+v", unchained)
	}
	if diff := cmp.Diff(l, unchained.Line()); diff != "" {
		t.Errorf("line read back from its event (-want +got):\n%s", diff)
	}
	e := Entry{Seq: 3, Prev: Hash{1}, Hash: LineHash(Hash{1}, 3, &l), Line: l}
	chained := LineEvent(e)
	if chained.Seq != 3 || *chained.PrevHash != e.Prev || *chained.Hash != e.Hash {
		t.Errorf("chained line's event link: %+v", chained)
	}
	if diff := cmp.Diff(l, chained.Line()); diff != "" {
		t.Errorf("chained line read back from its event (-want +got):\n%s", diff)
	}
}
