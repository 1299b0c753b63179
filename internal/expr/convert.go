package expr

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
)

// stringify is the stringify and to_string filter: the value as
// interpolation would print it. nil gives "", not "null", so that a missing
// value prints nothing whether or not it passes through stringify.
func stringify(v any, _ []arg) (any, error) { return render(v) }

// toNumber gives a json.Number, the type numbers decoded with UseNumber
// have, so a converted number compares and prints like an input one.
func toNumber(v any, _ []arg) (any, error) {
	switch x := v.(type) {
	case json.Number:
		if isJSONNumber(string(x)) {
			return x, nil
		}
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return json.Number(strconv.FormatFloat(x, 'f', -1, 64)), nil
		}
	case string:
		if isJSONNumber(x) {
			return json.Number(x), nil
		}
	}
	return nil, errors.New("to_number input is not a JSON number")
}

// isJSONNumber reports whether s is exactly a JSON number: no spaces, no
// "+", no leading zeros, no hex, no "Inf".
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && !isDigit(s[0])) || !isDigit(s[len(s)-1]) {
		return false
	}
	return json.Valid([]byte(s))
}

func toBoolean(v any, _ []arg) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch x {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return nil, errors.New(`to_boolean input is not true or false`)
}
