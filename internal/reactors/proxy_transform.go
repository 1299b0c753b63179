package reactors

import (
	"net/http"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TransformResult reads what transform code returned (out, from Run):
// the body, encoded as kind, and the headers it set; absent ones keep the
// input's (given, the body the code received, and header). A result
// that is not an object, or headers that cannot be sent, are CodeFailed;
// a body the code built that encodes to more than MaxResultBytes is
// TooLarge (a form body can be longer than the JSON the code returned).
func (c *Code) TransformResult(out, given any, kind BodyKind, header http.Header) ([]byte, http.Header, error) {
	res, _ := out.(map[string]any)
	if res == nil {
		return nil, nil, &unit.Error{Kind: unit.CodeFailed, Status: 500, Message: "a transform must return {body, headers}"}
	}
	body, built := given, false
	if b, ok := res["body"]; ok {
		body, built = b, true
	}
	switch h := res["headers"].(type) {
	case nil: // left out: the input's
	case map[string]any:
		var err error
		if header, err = CodeHeaders(h); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, CodeHeaderError(unit.InvalidField("headers", "must be an object of headers"))
	}
	encoded := EncodeBody(kind, body)
	if built && int64(len(encoded)) > c.MaxResultBytes {
		// A body the code left out is the one it was given.
		return nil, nil, c.ResultTooLarge("the body the transform built")
	}
	return encoded, header, nil
}
