package listing

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestParseQuery reads the search language: terms joined by AND (any
// case), quoted values, each field into its filter; and refuses what it
// does not read with an Invalid error naming query and saying why.
func TestParseQuery(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  Query
	}{
		{"", Query{}},
		{"data:123", Query{Search: []string{"123"}}},
		{`data:"a b" and type:card`, Query{Search: []string{"a b"}, Type: "card"}},
		{"metadata.customer:42 AND container:/a/b/ AND fingerprint:fp AND id:x AND id:y",
			Query{Metadata: map[string]string{"customer": "42"}, Container: "/a/b/", Fingerprint: "fp", IDs: []string{"x", "y"}}},
		{`metadata.note:""`, Query{Metadata: map[string]string{"note": ""}}},
		{"  data:a \t AND\ndata:b ", Query{Search: []string{"a", "b"}}},
		{`subject:cust-42 AND subject:cust-42 AND type:token`, Query{Subject: "cust-42", Type: "token"}},
		{`subject:"Ada L"`, Query{Subject: "Ada L"}},
	} {
		got, err := ParseQuery(tc.query)
		if err != nil {
			t.Errorf("ParseQuery(%q) = %v", tc.query, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseQuery(%q) (-want +got):\n%s", tc.query, diff)
		}
	}
	for _, tc := range []struct{ query, says string }{
		{"data:a data:b", `terms must be joined by AND, found "data:b"`},
		{`data:a "AND" data:b`, `terms must be joined by AND, found "AND"`},
		{"data:a AND", "AND must be followed by a term"},
		{"data", `each term must be field:value, found "data"`},
		{"data:", `each term must be field:value, found "data:"`},
		{`"data:a"`, `each term must be field:value, found "data:a"`},
		{"color:red", `unknown field "color"`},
		{"container:a", `container "a" is not a container`},
		{"metadata.a\x01b:c", `metadata key "a\x01b"`},
		{`data:"open`, "unterminated quote"},
		{"subject:a AND subject:b", `subject "b" is not one data subject`},
		{"subject:a/b", `subject "a/b" is not one data subject`},
		{"data:" + strings.Repeat("x", maxQueryLength), "must be at most 4096 bytes"},
	} {
		_, err := ParseQuery(tc.query)
		if unit.ErrorKind(err) != unit.Invalid || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "query") {
			t.Errorf("ParseQuery(%q) = %v, want Invalid naming query: %s", tc.query, err, tc.says)
		}
	}
}

// TestQueryMatches: each filter of a query holds against the record
// (metadata values compared case-insensitively, a container taking those
// below it), and a shape matches when every token of it does.
func TestQueryMatches(t *testing.T) {
	rec := &tokens.Record{Type: unit.TypeCard, Fingerprint: "fp", Containers: []string{"/a/b/", "/c/"},
		Metadata: map[string]string{"customer": "Ada"}}
	for _, tc := range []struct {
		q    Query
		want bool
	}{
		{Query{}, true},
		{Query{Type: unit.TypeCard, Container: "/a/", Fingerprint: "fp", Metadata: map[string]string{"customer": "ADA"}}, true},
		{Query{Type: unit.TypeToken}, false},
		{Query{Container: "/a/b/c/"}, false},
		{Query{Container: "/c/"}, true},
		{Query{Fingerprint: "other"}, false},
		{Query{Metadata: map[string]string{"customer": "Bob"}}, false},
		{Query{Metadata: map[string]string{"missing": ""}}, false},
	} {
		if got := tc.q.Matches(rec); got != tc.want {
			t.Errorf("%+v.Matches(record) = %v, want %v", tc.q, got, tc.want)
		}
	}
	shape := shapeOfRecord(&tokens.Record{Type: unit.TypeToken, Containers: []string{"/c/", "/a/b/", "/c/"}})
	if want := (tokens.ShapeRecord{Type: unit.TypeToken, Containers: []string{"/a/b/", "/c/"}}); !cmp.Equal(shape, want) {
		t.Errorf("shapeOfRecord = %+v, want %+v", shape, want)
	}
	for _, tc := range []struct {
		q    Query
		want bool
	}{
		{Query{}, true},
		{Query{Container: "/"}, true},
		{Query{Container: "/a/"}, true},
		{Query{Container: "/a/b/c/"}, false},
		{Query{Type: unit.TypeCard}, false},
		{Query{Type: unit.TypeToken, Container: "/c/"}, true},
	} {
		if got := tc.q.matchesShape(shape); got != tc.want {
			t.Errorf("%+v.matchesShape(%+v) = %v, want %v", tc.q, shape, got, tc.want)
		}
	}
	for _, tc := range []struct {
		q                      Query
		walkable, readsContent bool
	}{
		{Query{Type: unit.TypeCard, Container: "/a/"}, true, false},
		{Query{IDs: []string{}}, false, false},
		{Query{Search: []string{"x"}}, false, false},
		{Query{Fingerprint: "fp"}, false, true},
		{Query{Metadata: map[string]string{"k": "v"}}, false, true},
	} {
		if tc.q.Walkable() != tc.walkable || tc.q.ReadsContent() != tc.readsContent {
			t.Errorf("%+v: Walkable %v, ReadsContent %v; want %v, %v", tc.q, tc.q.Walkable(), tc.q.ReadsContent(), tc.walkable, tc.readsContent)
		}
	}
}
