package reactors

import (
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestCallbackStatusOfEveryKind: a callback body carries an HTTP status for
// every kind of error, the one httpapi answers with (StorageFull, added
// after this table, was status 0 in callback bodies).
func TestCallbackStatusOfEveryKind(t *testing.T) {
	for _, k := range unit.Kinds() {
		if kindStatus[k] == 0 {
			t.Errorf("kind %v has no status in callback bodies", k)
		}
	}
	got := CallbackErrorOf(&unit.Error{Kind: unit.StorageFull, Message: "storage full"})
	if got.Status != 507 || got.Detail != "storage full" {
		t.Errorf("CallbackErrorOf(StorageFull) = %+v, want status 507", got)
	}
}
