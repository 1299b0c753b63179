package reactors

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestCallbackErrorOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want *CallbackError
	}{
		{"invalid, with fields", unit.InvalidField("amount", "must be a number"),
			&CallbackError{Status: 400, Detail: "the request is invalid", Errors: map[string][]string{"amount": {"must be a number"}}}},
		{"code failed", &unit.Error{Kind: unit.CodeFailed, Message: "boom"}, &CallbackError{Status: 500, Detail: "boom"}},
		{"a status of its own", &unit.Error{Kind: unit.BadGateway, Status: 504, Message: "slow"}, &CallbackError{Status: 504, Detail: "slow"}},
		{"internal, never its message", unit.AsInternal(errors.New("disk on fire")), &CallbackError{Status: 500, Detail: "internal error"}},
		{"not the vault's", errors.New("disk on fire"), &CallbackError{Status: 500, Detail: "internal error"}},
	} {
		if diff := cmp.Diff(tc.want, CallbackErrorOf(tc.err)); diff != "" {
			t.Errorf("CallbackErrorOf(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
}
