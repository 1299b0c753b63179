package aliases

import "github.com/tokenvault/tokenvault/internal/expr"

// Rules are what aliases and fpe ids take from the token feature, which
// owns them: the id rules every id obeys, how an expression's value
// becomes text, the data expressions read, how stored JSON decodes and
// the expressions it has parsed once. The root builds one, from the token
// feature, when the package is initialised; this package never reaches up
// for them.
type Rules struct {
	// IDProblem says what is wrong with a token id, or "" if nothing is:
	// an alias and a derived id obey the rules of a literal id.
	IDProblem func(id string) string
	// Stringify renders an expression's value as the id's text.
	Stringify func(v any) string
	// ExprData is the data of a token of a type as its expressions see
	// it (a card's without its cvc).
	ExprData func(typ string, data any) any
	// DecodeJSON decodes a caller's JSON (a stored mask expression).
	DecodeJSON func(b []byte) (any, error)
	// DecodeRecordJSON decodes a record's own JSON (a token's stored
	// data), keeping the last of a key given twice.
	DecodeRecordJSON func(b []byte) (any, error)
	// Templates are expressions parsed once (the types' default masks),
	// by their source; any other is parsed when it is checked.
	Templates map[string]*expr.Template
	// MaxExpressionBytes bounds the source of one expression.
	MaxExpressionBytes int
}
