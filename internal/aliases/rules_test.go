package aliases

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// testRules stand in for the token feature's: ids of 3 to 400 characters
// without braces, values printed as strings or JSON, data as it is.
var testRules = &Rules{
	IDProblem: func(id string) string {
		if n := len(id); n < 3 || n > 400 {
			return "must be 3 to 400 characters"
		}
		if strings.ContainsAny(id, "{}") {
			return "must not contain braces"
		}
		return ""
	},
	Stringify: func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := json.Marshal(v)
		return string(b)
	},
	ExprData: func(_ string, data any) any { return data },
	DecodeJSON: func(b []byte) (any, error) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		return v, d.Decode(&v)
	},
	MaxExpressionBytes: 4096,
}

func init() { testRules.DecodeRecordJSON = testRules.DecodeJSON }

// mustParse parses an expression a test gives.
func mustParse(src string) *expr.Template {
	tmpl, err := expr.Parse(src)
	if err != nil {
		panic(fmt.Sprintf("expr.Parse(%q): %v", src, err))
	}
	return tmpl
}

// fieldErr is the first problem fe holds at path, or "".
func fieldErr(fe unit.FieldErrors, path string) string {
	if len(fe[path]) == 0 {
		return ""
	}
	return fe[path][0]
}
