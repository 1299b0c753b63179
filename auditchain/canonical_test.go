package auditchain_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/auditchain"
)

// TestReadExportRefusesNonCanonicalLines: a line of the fixture export
// re-encoded so that encoding/json still reads the original content
// (which hashes to the line's hash) while other readers see a forgery,
// or merely encoded otherwise than the vault writes it, is refused with
// an *ExportError naming its line and saying what is wrong; it is never
// a report that verifies.
func TestReadExportRefusesNonCanonicalLines(t *testing.T) {
	orig, keys := readFixture(t)
	three := tenantLine(t, orig, 3) // "message":"Token updated", no transform
	five := tenantLine(t, orig, 5)  // a read: transform, channel, application
	cp := -1                        // tenant A's checkpoint at 2
	for i, b := range orig {
		if bytes.Contains(b, []byte(`"id":"checkpoint-`+fixtureTenantA+"-0000000000000002")) {
			cp = i
		}
	}
	if cp < 0 {
		t.Fatal("no checkpoint of tenant A at 2 in the fixture")
	}
	for _, tc := range []struct {
		name     string
		line     int
		old, new string
		want     string
	}{
		{"a case-variant key beside the original", three, `"message":"Token updated"`, `"message":"FORGED","MESSAGE":"Token updated"`,
			`keys "message" and "MESSAGE" both name the field "message"`},
		{"a key given twice", three, `"actor_id":"`, `"actor_id":"someone-else","actor_id":"`,
			`duplicate key "actor_id"`},
		{"a key in another case alone", three, `"message":`, `"Message":`, `key "Message" is spelt "message"`},
		{"a key folded by Unicode case", three, `"message":`, `"meſſage":`, `key "meſſage" is spelt "message"`},
		{"an unknown field", three, `"message":"Token updated"`, `"message":"Token updated","note":"FORGED"`, `unknown field "note"`},
		{"an unknown field in the checkpoint", cp, `"key_id":`, `"comment":"FORGED","key_id":`, `unknown field "checkpoint.comment"`},
		{"a case variant in the checkpoint", cp, `"seq":2,`, `"seq":2,"SEQ":2,`, `keys "checkpoint.seq" and "checkpoint.SEQ"`},
		{"reordered keys", three, `"actor_type":"application","entity_type":"token"`, `"entity_type":"token","actor_type":"application"`,
			"not in canonical form"},
		{"an escaped character", three, `"Token updated"`, `"Tok\u0065n updated"`, `not in canonical form at byte`},
		{"white space between tokens", three, `"message":"Token updated"`, `"message": "Token updated"`, "not in canonical form"},
		{"white space before the line", three, `{"schema"`, ` {"schema"`, "not a JSON object"},
		{"white space after the line", three, "}\n", "} \n", "not in canonical form"},
		{"a carriage return before the newline", three, "}\n", "}\r\n", "not in canonical form"},
		{"an empty optional field given", three, `"created_at"`, `"transform":"","created_at"`, "not in canonical form"},
		{"a time with an offset", three, `Z"`, `+00:00"`, "not in canonical form"},
		{"a time with trailing zeros", three, `123Z"`, `12300Z"`, "not in canonical form"},
		{"a number with an exponent", three, `"seq":3,`, `"seq":3e0,`, "seq"},
		{"a checkpoint event whose time is not its checkpoint's", cp, `"created_at":"2030-01-02T03:04:08.750000123Z","checkpoint"`,
			`"created_at":"2031-01-02T03:04:08.750000123Z","checkpoint"`, "a checkpoint event other than the checkpoint's own"},
		{"a checkpoint event with a message", cp, `"message":""`, `"message":"FORGED"`, "a checkpoint event other than the checkpoint's own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := cloneLines(orig)
			tampered := bytes.Replace(lines[tc.line], []byte(tc.old), []byte(tc.new), 1)
			if bytes.Equal(tampered, lines[tc.line]) {
				t.Fatalf("line %d has no %q", tc.line+1, tc.old)
			}
			lines[tc.line] = tampered
			for _, tenant := range []string{fixtureTenantA, fixtureTenantB} { // whoever's line it is
				r, err := auditchain.VerifyExport(bytes.NewReader(bytes.Join(lines, nil)), tenant, keys, 1)
				var ee *auditchain.ExportError
				if !errors.As(err, &ee) || ee.Line != tc.line+1 || !strings.Contains(err.Error(), tc.want) || r != nil {
					t.Fatalf("VerifyExport(%s) = %+v, %v; want an ExportError at line %d saying %q", tenant, r, err, tc.line+1, tc.want)
				}
			}
		})
	}
	// The upper-case hash on its own: read by encoding/json as the same
	// bytes, refused as another encoding.
	lines := cloneLines(orig)
	ev := parseEvent(t, lines[five])
	lines[five] = bytes.Replace(lines[five], []byte(ev.str("hash")), []byte(strings.ToUpper(ev.str("hash"))), 1)
	_, err := auditchain.VerifyExport(bytes.NewReader(bytes.Join(lines, nil)), fixtureTenantA, keys, 1)
	if !errors.Is(err, auditchain.ErrNotCanonical) || !strings.Contains(err.Error(), fmt.Sprintf("export line %d:", five+1)) {
		t.Errorf("an upper-case hash: %v", err)
	}
}

// TestVerifyExportFirstZeroNeedsTheLines: -first 0 lets a copy start
// anywhere, but a copy with every line of the tenant removed (its
// checkpoints kept) does not verify: the lines the checkpoints vouch for
// are missing; a copy truncated under its last checkpoint neither.
func TestVerifyExportFirstZeroNeedsTheLines(t *testing.T) {
	orig, keys := readFixture(t)
	for _, tc := range []struct {
		name   string
		tenant string
		drop   func(seq uint64) bool
		want   []found
	}{
		{"every line removed", fixtureTenantA, func(uint64) bool { return true }, []found{{auditchain.Missing, lastA, lastA}}},
		{"every line of a deleted tenant removed", fixtureTenantB, func(uint64) bool { return true }, []found{{auditchain.Missing, 3, 3}}},
		{"the tail removed", fixtureTenantA, func(seq uint64) bool { return seq > 5 }, []found{{auditchain.UnsignedTail, 3, 5}, {auditchain.Missing, 6, lastA}}},
		{"the head removed: a copy begun later", fixtureTenantA, func(seq uint64) bool { return seq < 3 }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines [][]byte
			for _, b := range orig {
				ev := parseEvent(t, b)
				if ev.str("schema") == auditchain.LineSchema && ev.str("tenant_id") == tc.tenant && ev.seq() > 0 && tc.drop(ev.seq()) {
					continue
				}
				lines = append(lines, b)
			}
			r, err := auditchain.VerifyExport(bytes.NewReader(bytes.Join(lines, nil)), tc.tenant, keys, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []found
			for _, p := range r.Problems {
				got = append(got, found{p.Kind, p.Seq, p.LastSeq})
			}
			if r.OK != (tc.want == nil) || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("problems %+v, want %+v (report %+v)", got, tc.want, r)
			}
		})
	}
}
