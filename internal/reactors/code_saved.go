package reactors

import (
	"context"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Code that is saved (a formula's, a reactor's, a proxy's transforms) is
// checked in a worker first, and a check must not run while a write
// transaction holds the store. So a transaction that meets code the
// sandbox has not checked yet ends (CheckIn), the code is checked with no
// transaction open, and the transaction runs again (UpdateChecked): its
// second run finds the outcome known.

// errCheckFirst is returned from inside a transaction that found code it
// has not checked yet; UpdateChecked checks the code and runs the
// transaction again.
var errCheckFirst = &unit.Error{Kind: unit.Internal, Message: "the code must be checked first"}

// unchecked is code a transaction met before it was checked.
type unchecked struct{ tenant, code, field string }

// uncheckedOf is the code a transaction met unchecked (CheckIn), which
// UpdateChecked reads when the transaction function returns.
var uncheckedOf unit.Local[unchecked]

// CheckIn, inside a write transaction run by UpdateChecked, returns the
// outcome of checking code for tenant when the sandbox knows it (nil, or
// the refusal explained on field, as Check explains it). Otherwise it
// remembers the code and returns an Internal error the transaction
// function returns as it is: UpdateChecked checks the code outside the
// transaction, once the caller is authorized, and runs it again.
func (c *Code) CheckIn(t *unit.Tx, tenant, code, field string) error {
	if err, known := c.Checked(code, field); known {
		return err
	}
	*uncheckedOf.Of(t) = unchecked{tenant: tenant, code: code, field: field}
	return errCheckFirst
}

// UpdateChecked runs update, a write transaction that calls seen with its
// Tx once its function has returned, until the function meets no code it
// has not checked (CheckIn): then the code is checked in a worker, with
// no transaction open, and the transaction runs again, at most three
// times more. Returns update's error, or the refusal of the code.
func (c *Code) UpdateChecked(ctx context.Context, update func(seen func(*unit.Tx)) error) error {
	for attempt := 0; ; attempt++ {
		var pending *unchecked
		err := update(func(t *unit.Tx) {
			pending = nil
			if u, ok := uncheckedOf.Peek(t); ok {
				pending = u
			}
		})
		if err != errCheckFirst || pending == nil || attempt == 3 {
			return err
		}
		if err := c.Check(ctx, pending.tenant, pending.code, pending.field); err != nil {
			return err
		}
	}
}
