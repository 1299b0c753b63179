package tokenvault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tokenvault/tokenvault"
)

func TestErrorIsMatchesKind(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &tokenvault.Error{Kind: tokenvault.NotFound, Message: "application not found"})
	if !errors.Is(err, tokenvault.ErrNotFound) {
		t.Errorf("errors.Is(%v, ErrNotFound) = false", err)
	}
	if errors.Is(err, tokenvault.ErrConflict) {
		t.Errorf("errors.Is(%v, ErrConflict) = true", err)
	}
	if k := tokenvault.ErrorKind(errors.New("plain")); k != tokenvault.Internal {
		t.Errorf("ErrorKind(plain error) = %v, want internal", k)
	}
	fe := &tokenvault.Error{Kind: tokenvault.Invalid, Message: "bad", Fields: map[string][]string{"b": {"x"}, "a": {"y", "z"}}}
	if got, want := fe.Error(), "tokenvault: bad; a: y, z; b: x"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	for _, k := range tokenvault.Kinds() {
		if k.String() == "" || k.String()[0] == 'k' {
			t.Errorf("kind %d has no name", k)
		}
	}
}
