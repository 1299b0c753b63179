package transfer

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Line is one token of the exchange format: the fields of the API's token
// object as GET /tokens/{id} answers with reveal, snake_case in JSON.
// Number is its line number in the file (1 for the first), for rejects.
type Line struct {
	Number                int64             `json:"-"`
	ID                    string            `json:"id"`
	Type                  string            `json:"type"`
	Data                  any               `json:"data"`
	Metadata              map[string]string `json:"metadata,omitempty"`
	SearchIndexes         []string          `json:"search_indexes,omitempty"`
	FingerprintExpression string            `json:"fingerprint_expression,omitempty"`
	Mask                  any               `json:"mask,omitempty"`
	Containers            []string          `json:"containers,omitempty"`
	ExpiresAt             *time.Time        `json:"expires_at,omitempty"`
	CreatedAt             *time.Time        `json:"created_at,omitempty"`
	// Subject is the data subject the token belongs to (tokens.Request's
	// Subject): sealed under the subject's own key, as at tokenize.
	Subject string `json:"subject,omitempty"`
	// Problem, when not empty, is why the line could not be read: the
	// batch rejects it with this reason.
	Problem string `json:"-"`
	// Raw, when set, is the line's exchange-format JSON as read, not
	// decoded: a reader of NDJSON passes its lines on as they are
	// (MarshalLine), and the receiving vault decodes them once.
	Raw []byte `json:"-"`
}

// ignoredFields are the hosted service's read-only fields: an export of it
// carries them, the receiving vault computes or assigns its own.
var ignoredFields = []string{
	"tenant_id", "created_by", "modified_by", "modified_at", "fingerprint",
	"enrichments", "privacy", "aliases", "deduplicate_token", "_debug",
}

// knownFields are the exchange format's fields.
var knownFields = []string{
	"id", "type", "data", "metadata", "search_indexes", "fingerprint_expression",
	"mask", "containers", "expires_at", "created_at", "subject",
}

// DecodeLine reads one line of the exchange format. A line that is not a
// JSON object of the format's fields gives a Line whose Problem says why
// (never quoting the line: it holds data).
func DecodeLine(b []byte, number int64) Line {
	v, err := jsontext.Decode(b)
	if err != nil {
		return Line{Number: number, Problem: "not valid JSON" + detail(err)}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return Line{Number: number, Problem: "not a JSON object"}
	}
	return LineOf(obj, number)
}

// detail is the part of a JSON decoding error that is safe to show: the
// kind of problem only, never the text around it.
func detail(err error) string {
	if e, ok := err.(*unit.Error); ok && e.Message != "" && !strings.Contains(e.Message, "\"") {
		return ": " + e.Message
	}
	return ""
}

// LineOf reads a decoded JSON object of the exchange format (plain JSON
// values, numbers as json.Number). The hosted service's read-only fields
// are ignored; any other unknown field is a Problem.
func LineOf(obj map[string]any, number int64) Line {
	l := Line{Number: number}
	var unknown []string
	for k := range obj {
		if !slices.Contains(knownFields, k) && !slices.Contains(ignoredFields, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		l.Problem = "unknown field " + quoteField(unknown[0])
		return l
	}
	var problem string
	str := func(name string) string {
		v, ok := obj[name]
		if !ok || v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok && problem == "" {
			problem = name + ": must be a string"
		}
		return s
	}
	strs := func(name string) []string {
		v, ok := obj[name]
		if !ok || v == nil {
			return nil
		}
		a, ok := v.([]any)
		out := make([]string, 0, len(a))
		for _, x := range a {
			s, isStr := x.(string)
			if !isStr {
				ok = false
				break
			}
			out = append(out, s)
		}
		if !ok && problem == "" {
			problem = name + ": must be an array of strings"
		}
		return out
	}
	when := func(name string) *time.Time {
		s := str(name)
		if s == "" {
			return nil
		}
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			if problem == "" {
				problem = name + ": must be an RFC 3339 time"
			}
			return nil
		}
		return &at
	}
	l.ID = str("id")
	l.Type = str("type")
	l.Data = obj["data"]
	l.Mask = obj["mask"]
	l.FingerprintExpression = str("fingerprint_expression")
	l.Subject = str("subject")
	l.SearchIndexes = strs("search_indexes")
	l.Containers = strs("containers")
	l.ExpiresAt = when("expires_at")
	l.CreatedAt = when("created_at")
	if m, ok := obj["metadata"]; ok && m != nil {
		mo, ok := m.(map[string]any)
		if !ok && problem == "" {
			problem = "metadata: must be an object of strings"
		}
		l.Metadata = make(map[string]string, len(mo))
		for k, v := range mo {
			s, ok := v.(string)
			if !ok {
				if problem == "" {
					problem = "metadata: must be an object of strings"
				}
				continue
			}
			l.Metadata[k] = s
		}
	}
	switch {
	case problem != "":
	case l.ID == "":
		problem = "id: is required"
	case l.Type == "":
		problem = "type: is required"
	case l.Data == nil:
		problem = "data: is required"
	}
	l.Problem = problem
	return l
}

// quoteField names a field of a line in a reason: a field name is not
// data, but is cut short and quoted so that a reason stays one short line.
func quoteField(k string) string {
	if len(k) > 40 {
		k = k[:40] + "..."
	}
	return fmt.Sprintf("%q", k)
}

// MarshalLine is the line's exchange-format JSON (no newline): Raw when
// set.
func MarshalLine(l Line) ([]byte, error) {
	if l.Raw != nil {
		return l.Raw, nil
	}
	return json.Marshal(l)
}
