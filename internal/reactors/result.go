package reactors

import "github.com/tokenvault/tokenvault/internal/unit"

// ReactorResult splits what a reactor's code returned into raw (given
// back as it is) and tokenize (what the Vault tokenizes for the caller,
// nil for nothing). A result that is not an object is CodeFailed (500);
// no result at all is neither.
func ReactorResult(result any) (raw, tokenize any, err error) {
	if result == nil {
		return nil, nil, nil
	}
	obj, ok := result.(map[string]any)
	if !ok {
		return nil, nil, &unit.Error{Kind: unit.CodeFailed, Status: 500, Message: "the reactor must return an object such as {raw: ..., tokenize: ...}"}
	}
	return obj["raw"], obj["tokenize"], nil
}
