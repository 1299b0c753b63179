package unit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// TestEndedHook: every kind of unit of work that fails tells the Ended
// hooks its error, under the call's context (its CallInfo with the
// subject the call recorded), once its transaction has ended; a unit
// that succeeds tells none. A call is marked denied once.
func TestEndedHook(t *testing.T) {
	w := worktest.New(t)
	type ended struct {
		err     error
		subject *unit.Subject
	}
	var got []ended
	w.Hook(unit.Hooks{Ended: func(ctx context.Context, err error) {
		got = append(got, ended{err, unit.CallOf(ctx).Subject()})
	}})
	refused := unit.Forbidden("token:read")
	fail := func(tx *unit.Tx) error {
		unit.RecordSubject(tx.Ctx, "tenant-a", unit.Actor{ID: "app-1", Type: unit.ActorApplication}, "")
		unit.RecordSubject(tx.Ctx, "tenant-b", unit.Actor{ID: "app-2", Type: unit.ActorApplication}, "later") // the first wins
		return refused
	}
	ok := func(*unit.Tx) error { return nil }
	for name, run := range map[string]func(context.Context, func(*unit.Tx) error) error{
		"View": w.View, "Update": w.Update, "UpdateOptimistic": w.UpdateOptimistic,
	} {
		got = nil
		info := new(unit.CallInfo)
		c := unit.WithCallInfo(context.Background(), info)
		if err := run(c, ok); err != nil || len(got) != 0 {
			t.Errorf("%s(ok) = %v, told the hook %v; want nil, nothing", name, err, got)
		}
		if err := run(c, fail); !errors.Is(err, refused) {
			t.Errorf("%s(refused) = %v, want %v", name, err, refused)
		}
		if len(got) != 1 || !errors.Is(got[0].err, refused) || got[0].subject == nil ||
			*got[0].subject != (unit.Subject{TenantID: "tenant-a", Actor: unit.Actor{ID: "app-1", Type: unit.ActorApplication}}) {
			t.Errorf("%s(refused) told the hook %+v, want the error with tenant-a's app-1", name, got)
		}
		if !info.MarkDenied() || info.MarkDenied() {
			t.Errorf("%s: MarkDenied not true once, then false", name)
		}
	}
}
