package reactors

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// BodyKind is what a proxy makes of a body, by its Content-Type.
type BodyKind int

// Body kinds a proxy reads: JSON and forms are detokenized and
// transformed, anything else streams through untouched.
const (
	BodyOther BodyKind = iota
	BodyJSON
	BodyForm
)

// KindOfBody is the kind of the body h's Content-Type announces: JSON for
// application/json and any +json type, Form for
// application/x-www-form-urlencoded, Other for anything else or a
// Content-Type that does not parse.
func KindOfBody(h http.Header) BodyKind {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	switch {
	case err != nil:
		return BodyOther
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return BodyJSON
	case mt == "application/x-www-form-urlencoded":
		return BodyForm
	}
	return BodyOther
}

// FormObject is a form as code sees it: one string per name, or an array
// for a repeated name.
func FormObject(vals url.Values) map[string]any {
	out := make(map[string]any, len(vals))
	for k, vs := range vals {
		if len(vs) == 1 {
			out[k] = vs[0]
			continue
		}
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		out[k] = arr
	}
	return out
}

// EncodeBody renders a parsed body back in its content type: JSON as
// encoding/json writes it; a form from an object whose values are
// strings (as they are), arrays (one field each) or other values (as
// JSON). A nil body, or a body of kind Other, is nil.
func EncodeBody(kind BodyKind, body any) []byte {
	if body == nil {
		return nil
	}
	switch kind {
	case BodyJSON:
		b, _ := json.Marshal(body)
		return b
	case BodyForm:
		vals := url.Values{}
		if m, ok := body.(map[string]any); ok {
			for k, v := range m {
				switch x := v.(type) {
				case []any:
					for _, e := range x {
						vals.Add(k, formValue(e))
					}
				default:
					vals.Set(k, formValue(x))
				}
			}
		}
		return []byte(vals.Encode())
	}
	return nil
}

// formValue is the text of one form field: a string as it is, anything
// else as JSON, nothing as "" (the text the root's expressions render).
func formValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}
