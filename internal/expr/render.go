package expr

import (
	"encoding/json"
	"errors"
	"strconv"
)

// render is the text of a value, as interpolation and text filters see it:
// strings as they are, nil as "" (a missing value prints nothing, as in
// Liquid), numbers in their shortest decimal form, booleans as true or
// false, objects and arrays as JSON.
//
// It fails only for values that have no JSON form, such as a NaN inside
// an object or a Go type a Resolver should not have returned.
func render(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.Number:
		return string(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", errors.New("value has no JSON form")
	}
	return string(b), nil
}
