package expr

import (
	"fmt"
	"strconv"
)

// Error is the one error type of the package, for parse and evaluation
// errors alike, so callers can point at the offending place of a template
// without matching on text.
type Error struct {
	// Pos is a 0-based byte offset into the template source. A parse error
	// points at the offending token; an evaluation error points at the
	// "{{" of the expression that failed.
	Pos int
	// Msg says what is wrong. It never quotes the evaluated data, which
	// may be the sensitive value being tokenized.
	Msg string
}

func (e *Error) Error() string { return "position " + strconv.Itoa(e.Pos) + ": " + e.Msg }

func errorAt(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
