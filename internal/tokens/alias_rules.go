package tokens

import (
	"github.com/tokenvault/tokenvault/internal/aliases"
	"github.com/tokenvault/tokenvault/internal/jsontext"
)

// AliasRules are the token feature's rules that alias and fpe ids obey:
// what an id may be, how data is stringified and exposed to expressions,
// the types' default templates and the expressions' bound. Package
// aliases takes them as its Rules, so it never imports this package;
// Open gives them to Service.Aliases.
var AliasRules = &aliases.Rules{
	IDProblem:          CustomIDProblem,
	Stringify:          Stringify,
	ExprData:           ExprData,
	DecodeJSON:         jsontext.Decode,
	DecodeRecordJSON:   jsontext.DecodeLastWins,
	Templates:          DefaultTemplates,
	MaxExpressionBytes: MaxExpressionBytes,
}
