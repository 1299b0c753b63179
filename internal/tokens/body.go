package tokens

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// DecodeBody decodes a Tokenize body into plain JSON values, once (see
// internal/jsontext). Strings that are not valid UTF-8 are Invalid (see
// jsontext.CheckGoText and jsontext.Decode).
func DecodeBody(body any) (any, error) {
	var b []byte
	switch x := body.(type) {
	case jsoncheck.Doc: // httpapi's: checked and decoded
		v, err := jsontext.DocValue(x)
		if err != nil {
			return nil, err
		}
		return bodyShape(v)
	case json.RawMessage: // its text is checked by jsontext.Decode
		b = x
	case []byte:
		b = x
	default:
		if v, ok := jsontext.PlainCopy(body); ok {
			return bodyShape(v)
		}
		if err := jsontext.CheckGoText(body, ""); err != nil {
			return nil, err
		}
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, unit.InvalidField("", "the body cannot be encoded as JSON")
		}
	}
	v, err := jsontext.Decode(b)
	if jsontext.Refused(err) {
		return nil, err
	}
	if err != nil {
		return nil, unit.InvalidField("", "the body is not valid JSON")
	}
	return bodyShape(v)
}

// bodyShape refuses a decoded body that is neither an object nor an array.
func bodyShape(v any) (any, error) {
	switch v.(type) {
	case map[string]any, []any:
		return v, nil
	}
	return nil, unit.InvalidField("", "the body must be a token request, an object or an array")
}

// IsRequest tells a token request from a plain nested object: it has
// a "type" naming a token type and a "data" property, or it converts a
// token intent: a string "token_intent_id" (type and data are then the
// intent's, and given anyway they are refused by Service.Prepare).
func IsRequest(m map[string]any) bool {
	if _, ok := m["token_intent_id"].(string); ok {
		return true
	}
	typ, _ := m["type"].(string)
	_, hasData := m["data"]
	return hasData && slices.Contains(Types, typ)
}

// DecodeRequest decodes a token request object strictly: unknown
// fields and wrong types are errors under path.
func DecodeRequest(m map[string]any, path string) (Request, *unit.Error) {
	if req, ok := RequestOf(m); ok {
		return req, nil
	}
	return decodeRequestJSON(m, path)
}

// decodeRequestJSON is DecodeRequest through encoding/json.
func decodeRequestJSON(m map[string]any, path string) (Request, *unit.Error) {
	var req Request
	// Keys equal but for case ("data" and "DATA") go into one field:
	// encoding/json would keep one of them without a word.
	if e := jsoncheck.Fold(m, requestType); e != nil {
		return req, unit.InvalidField(jsoncheck.Join(path, e.Path), "%s", e.Message())
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		for k, v := range md {
			if v == nil {
				// encoding/json would store it as "" without a word.
				return req, unit.InvalidField(jsontext.Field(jsontext.Field(path, "metadata"), k), "must be a string, not null")
			}
		}
	}
	b, _ := json.Marshal(m)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	if err == nil {
		return req, nil
	}
	if e := jsontext.BadDateTime(m, "expires_at", path); e != nil {
		return req, e
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return req, unit.InvalidField(jsontext.Field(path, typ.Field), "must be a %s", jsonTypeName(typ.Type.Kind().String()))
	}
	if u := jsoncheck.UnknownField(b, requestType); u != nil {
		return req, unit.InvalidField(jsontext.Field(path, u.Name), "unknown field")
	}
	return req, unit.InvalidField(path, "is not a valid token request")
}

var requestType = reflect.TypeFor[Request]()

// RequestOf is DecodeRequest without encoding m again, for the
// usual request: every key one of Request's JSON names, spelled
// exactly, with a value of its field's type. It reports false for anything
// else (a null, another spelling, an unknown key, expires_at, a wrong
// type), and DecodeRequest then decodes m through encoding/json, which
// decides and names what is wrong. Data and Mask are copied, as decoding
// would have: the request may be changed without changing m.
func RequestOf(m map[string]any) (Request, bool) {
	var req Request
	for k, v := range m {
		ok := true
		switch k {
		case "id":
			req.ID, ok = v.(string)
		case "type":
			req.Type, ok = v.(string)
		case "data":
			req.Data = copyJSON(v)
		case "mask":
			req.Mask = copyJSON(v)
		case "containers":
			req.Containers, ok = stringsOf(v)
		case "search_indexes":
			req.SearchIndexes, ok = stringsOf(v)
		case "fingerprint_expression":
			req.FingerprintExpression, ok = v.(string)
		case "deduplicate_token":
			req.DeduplicateToken, ok = v.(bool)
		case "metadata":
			req.Metadata, ok = stringMapOf(v)
		case "token_intent_id":
			req.TokenIntentID, ok = v.(string)
		default: // expires_at too: time.Time decodes it
			ok = false
		}
		if !ok {
			return Request{}, false
		}
	}
	return req, true
}

// stringsOf is v as a []string, if it is an array of strings.
func stringsOf(v any) ([]string, bool) {
	a, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(a))
	for i, e := range a {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// stringMapOf is v as a map[string]string, if it is an object of strings.
func stringMapOf(v any) (map[string]string, bool) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(o))
	for k, e := range o {
		if out[k], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// copyJSON copies the objects and arrays of a decoded JSON value.
func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	}
	return v
}

// jsonTypeName names a Go kind the way a JSON user would.
func jsonTypeName(kind string) string {
	switch kind {
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	case "bool":
		return "boolean"
	case "string":
		return "string"
	case "ptr":
		return "date-time string"
	default:
		return "number"
	}
}

// Indexes lists the index entries of a token: its fingerprint (when
// fpInStore: a shared store; see fingerprints.go), search index values and
// metadata (all as keyed MACs, never plaintext), its expiry, and the
// removal of a card's cvc.
func Indexes(ks *barrier.Keys, rec *Record, search []string, fpInStore bool) []string {
	tid, id := rec.TenantID, rec.ID
	var idx []string
	if rec.Fingerprint != "" && fpInStore {
		idx = append(idx, barrier.Tenant(tid).FingerprintIndex(rec.Fingerprint).Key(id).String())
	}
	for _, s := range search {
		idx = append(idx, SearchIndex(ks, tid, s).Key(id).String())
	}
	for _, k := range slices.Sorted(maps.Keys(rec.Metadata)) {
		idx = append(idx, MetadataIndex(ks, tid, k, rec.Metadata[k]).Key(id).String())
	}
	if rec.ExpiresAt != nil {
		idx = append(idx, barrier.Tenant(tid).Expiry(*rec.ExpiresAt, Kind, id).String())
	}
	if rec.CVCAt != nil {
		idx = append(idx, barrier.Tenant(tid).CVCDue(*rec.CVCAt, id).String())
	}
	if rec.Decoy {
		idx = append(idx, DecoyIndex(tid).Key(id).String())
	}
	if rec.Subject != "" {
		idx = append(idx, SubjectIndex(ks, tid, rec.Subject).Key(id).String())
	}
	slices.Sort(idx)
	return slices.Compact(idx)
}

// FingerprintOf is the fingerprint of a value: a keyed MAC, so equal values
// match within a tenant and nothing about the value can be learnt from it.
func FingerprintOf(ks *barrier.Keys, value string) string {
	return hex.EncodeToString(ks.MAC([]byte("fingerprint\x00"), []byte(value)))
}

func SearchIndex(ks *barrier.Keys, tid, value string) barrier.Prefix {
	return barrier.Tenant(tid).SearchIndex(hex.EncodeToString(ks.MAC([]byte("search\x00"), []byte(value))))
}

// SubjectIndex indexes the tokens of a data subject (Record.Subject), by
// the subject's keyed hash: exact, case-sensitive.
func SubjectIndex(ks *barrier.Keys, tid, subject string) barrier.Prefix {
	return barrier.Tenant(tid).Index("subject").Sub(hex.EncodeToString(ks.MAC([]byte("subject\x00"), []byte(subject))) + "/")
}

// MetadataIndex indexes a metadata entry; values match case-insensitively.
func MetadataIndex(ks *barrier.Keys, tid, key, value string) barrier.Prefix {
	m := ks.MAC([]byte("metadata\x00"), []byte(key), []byte{0}, []byte(strings.ToLower(value)))
	return barrier.Tenant(tid).MetadataIndex(hex.EncodeToString(m))
}

// Walk rebuilds a tree of JSON values (objects, arrays and leaves),
// the one walk behind tokenize and detokenize. visit is called on every node
// with its path ("cards[2].data"), object keys in sorted order so that ids,
// errors and log lines come in a stable order. It returns the node's
// replacement and true, or false to descend into an object or array (an
// unhandled leaf is kept as it is).
func Walk(v any, path string, visit func(v any, path string) (any, bool, error)) (any, error) {
	r, handled, err := visit(v, path)
	if err != nil || handled {
		return r, err
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if out[k], err = Walk(x[k], jsontext.Field(path, k), visit); err != nil {
				return nil, err
			}
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			if out[i], err = Walk(val, fmt.Sprintf("%s[%d]", path, i), visit); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}
