package reactors

import (
	"context"
	"testing"

	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

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
	w := worktest.New(t).Work

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
