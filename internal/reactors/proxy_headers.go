package reactors

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// droppedHeaders are the headers a proxy never forwards: hop-by-hop
// headers (RFC 9110 7.6.1), the ones the outbound call sets itself, and
// the service's own.
var droppedHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length", "Accept-Encoding",
}

// CheckHeaders refuses, as Invalid, headers that net/http will not send:
// a name that is not a token, a value with a control character other than
// tab (RFC 9110 5.1, 5.5). Checked before anything is detokenized or
// logged, so such a call is not taken for a destination's failure.
func CheckHeaders(h http.Header) error {
	fe := unit.FieldErrors{}
	for name, values := range h {
		ok := name != ""
		for i := 0; i < len(name) && ok; i++ {
			c := name[i]
			ok = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		}
		for _, v := range values {
			for i := 0; i < len(v) && ok; i++ {
				ok = v[i] == '\t' || v[i] >= 0x20 && v[i] != 0x7f
			}
		}
		if !ok {
			fe.Add("headers."+name, "is not a valid HTTP header")
		}
	}
	return fe.Err()
}

// ForwardHeaders copies the caller's headers minus hop-by-hop and SVC-*.
func ForwardHeaders(in http.Header) http.Header {
	out := in.Clone()
	for _, name := range droppedHeaders {
		out.Del(name)
	}
	for name := range out {
		if strings.HasPrefix(strings.ToUpper(name), "SVC-") {
			delete(out, name)
		}
	}
	return out
}

// ResponseHeaders copies a destination's headers minus the hop-by-hop
// ones; its Content-Length stays, for a body passed through as it is.
func ResponseHeaders(in http.Header) http.Header {
	h := in.Clone()
	for _, name := range droppedHeaders {
		if name != "Content-Length" {
			h.Del(name)
		}
	}
	return h
}

// HeaderObject is headers as code sees them: one string per name (values
// joined with ", "), names in canonical form.
func HeaderObject(h http.Header) map[string]any {
	out := make(map[string]any, len(h))
	for k, vs := range h {
		out[k] = strings.Join(vs, ", ")
	}
	return out
}

// CodeHeaders turns the headers code returned (a transform's, or a
// CustomHttpResponseError's) into an http.Header.
// A value is a string, a number (written as JavaScript writes it) or a
// boolean, or an array of those (one header line each); null leaves the
// header, or an array's element, out. The hop-by-hop and framing headers
// (those ForwardHeaders drops) are left out too: the vault frames what it
// sends, and code that set Content-Length could make the answer claim
// bytes it does not have, leaving the caller's connection waiting.
// Any other value (an object, a nested array), a name that is not a token
// or a value with a control character is refused as the code's failure
// (CodeFailed, 500), naming the header, in both directions.
func CodeHeaders(h map[string]any) (http.Header, error) {
	out := http.Header{}
	fe := unit.FieldErrors{}
	for name, v := range h {
		var values []any
		switch x := v.(type) {
		case nil:
			continue
		case []any:
			values = x
		default:
			values = []any{x}
		}
		for _, e := range values {
			switch e := e.(type) {
			case nil:
			case string:
				out.Add(name, e)
			case bool:
				out.Add(name, strconv.FormatBool(e))
			case json.Number:
				out.Add(name, e.String())
			case float64:
				out.Add(name, numberText(e))
			default:
				fe.Add("headers."+http.CanonicalHeaderKey(name), "must be a string, a number, a boolean or an array of them")
			}
		}
	}
	if err := fe.Err(); err != nil {
		return nil, CodeHeaderError(err)
	}
	if err := CheckHeaders(out); err != nil {
		return nil, CodeHeaderError(err)
	}
	for _, name := range droppedHeaders {
		out.Del(name)
	}
	return out, nil
}

// numberText writes f as JavaScript's String(f) does, for the numbers a
// header holds: 1700000000, not Go's 1.7e+09; exponents only from 1e21
// and below 1e-6; -0 as 0.
func numberText(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// CodeHeaderError is the failure of code that returned headers that
// cannot be sent: the tenant's code, not the destination, is at fault.
// It carries the fields of err when err is a *unit.Error.
func CodeHeaderError(err error) error {
	e := &unit.Error{Kind: unit.CodeFailed, Status: http.StatusInternalServerError,
		Message: "the code returned a header that cannot be sent"}
	if fe, ok := err.(*unit.Error); ok {
		e.Fields = fe.Fields
	}
	return e
}
