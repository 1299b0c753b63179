package reactors

import (
	"context"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store/memory"
)

// plainWrapper leaves keyrings unwrapped: these tests write no sealed
// value.
type plainWrapper struct{}

func (plainWrapper) WrapKeys(_ context.Context, _ string, p []byte) ([]byte, error)   { return p, nil }
func (plainWrapper) UnwrapKeys(_ context.Context, _ string, r []byte) ([]byte, error) { return r, nil }

// newWork is a unit of work over a new memory store.
func newWork(t *testing.T) *unit.Work {
	t.Helper()
	now := func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }
	b := barrier.New(barrier.Config{Store: memory.New(), Wrapper: plainWrapper{}, Now: now,
		TenantGone: unit.NotFoundError("tenant"), Instance: "test"})
	sys, err := barrier.NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	b.SetSystemKeys(sys)
	t.Cleanup(func() { b.Close() })
	return unit.NewWork(b, unit.Options{Now: now, Generation: func() uint64 { return 0 },
		IdentitiesChanged: func() {}, Result: func(err error) error { return err }})
}

// saveCode runs UpdateChecked over w with a transaction function that
// checks code (CheckIn), and counts its runs.
func saveCode(t *testing.T, c *Code, w *unit.Work, code string) (runs int, err error) {
	t.Helper()
	ctx := context.Background()
	err = c.UpdateChecked(ctx, func(seen func(*unit.Tx)) error {
		return w.Update(ctx, func(tx *unit.Tx) error {
			runs++
			err := c.CheckIn(tx, "t1", code, "code")
			seen(tx)
			return err
		})
	})
	return runs, err
}

func TestUpdateCheckedChecksOutsideTheTransaction(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Options{InProcess: true})
	t.Cleanup(func() { sb.Close() })
	c := &Code{Sandbox: sb, MaxResultBytes: sandbox.DefaultMaxResultBytes}
	w := newWork(t)

	code := "module.exports = async function (req) { return 1 }"
	if runs, err := saveCode(t, c, w, code); err != nil || runs != 2 {
		t.Fatalf("saving new code: %d runs, %v; want 2 runs (the check between them), nil", runs, err)
	}
	if runs, err := saveCode(t, c, w, code); err != nil || runs != 1 {
		t.Errorf("saving checked code: %d runs, %v; want 1 run, nil", runs, err)
	}
	runs, err := saveCode(t, c, w, "module.exports = async function (req) {")
	if e, ok := err.(*unit.Error); !ok || e.Kind != unit.Invalid || len(e.Fields["code"]) == 0 || runs != 1 {
		t.Errorf("saving a syntax error: %d runs, %v; want Invalid at code after 1 run", runs, err)
	}
}
