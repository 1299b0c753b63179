package auditchain_test

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
)

// event is one export line opened for tampering.
type event map[string]any

func parseEvent(t *testing.T, b []byte) event {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var ev event
	if err := d.Decode(&ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// bytes is ev in the canonical form of an export line (as the vault
// writes it: fixtureEvent's key order), so that what a tampering test
// changes is the content, not the encoding.
func (ev event) bytes(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var fe fixtureEvent
	if err := json.Unmarshal(b, &fe); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(fe); err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func (ev event) str(k string) string { s, _ := ev[k].(string); return s }

func (ev event) seq() uint64 {
	n, _ := ev["seq"].(json.Number)
	var s uint64
	fmt.Sscan(string(n), &s)
	return s
}

// rehash sets ev's prev_hash and recomputes its hash, as an attacker who
// knows the format does, and returns the new hash.
func (ev event) rehash(t *testing.T, prev auditchain.Hash) auditchain.Hash {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, ev.str("created_at"))
	if err != nil {
		t.Fatal(err)
	}
	l := auditchain.Line{TenantID: ev.str("tenant_id"), ID: ev.str("id"), CreatedAt: at, ActorID: ev.str("actor_id"),
		ActorType: ev.str("actor_type"), EntityType: ev.str("entity_type"), EntityID: ev.str("entity_id"),
		Operation: ev.str("operation"), Message: ev.str("message"), Transform: ev.str("transform"),
		Channel: ev.str("channel"), Application: ev.str("application")}
	h := auditchain.LineHash(prev, ev.seq(), &l)
	ev["prev_hash"], ev["hash"] = prev.String(), h.String()
	return h
}

// tenantLine is the index in lines of tenant A's first copy of line seq.
func tenantLine(t *testing.T, lines [][]byte, seq uint64) int {
	t.Helper()
	for i, b := range lines {
		ev := parseEvent(t, b)
		if ev.str("schema") == auditchain.LineSchema && ev.str("tenant_id") == fixtureTenantA && ev.seq() == seq {
			return i
		}
	}
	t.Fatalf("no line %d of tenant A in the fixture", seq)
	return -1
}

// dropLine removes every copy of tenant A's line seq.
func dropLine(t *testing.T, lines [][]byte, seq uint64) [][]byte {
	t.Helper()
	return slices.DeleteFunc(lines, func(b []byte) bool {
		ev := parseEvent(t, b)
		return ev.str("schema") == auditchain.LineSchema && ev.str("tenant_id") == fixtureTenantA && ev.seq() == seq
	})
}

// setLine replaces every copy of tenant A's line seq by ev.
func setLine(t *testing.T, lines [][]byte, seq uint64, ev event) {
	t.Helper()
	for i, b := range lines {
		if old := parseEvent(t, b); old.str("schema") == auditchain.LineSchema && old.str("tenant_id") == fixtureTenantA && old.seq() == seq {
			lines[i] = ev.bytes(t)
		}
	}
}

type found struct {
	kind         auditchain.ProblemKind
	seq, lastSeq uint64
}

// TestExportTamperingDetected: each tampering with a copy of the fixture
// export is reported at the exact sequence number, and nothing else is.
func TestExportTamperingDetected(t *testing.T) {
	orig, keys := readFixture(t)
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, lines [][]byte) [][]byte
		want   []found
	}{
		{"alter a line's message", func(t *testing.T, lines [][]byte) [][]byte {
			ev := parseEvent(t, lines[tenantLine(t, lines, 4)])
			ev["message"] = "Token updated"
			setLine(t, lines, 4, ev)
			return lines
		}, []found{{auditchain.Altered, 4, 0}}},
		{"alter a line's transform, which the chain covers", func(t *testing.T, lines [][]byte) [][]byte {
			ev := parseEvent(t, lines[tenantLine(t, lines, 4)])
			delete(ev, "transform")
			setLine(t, lines, 4, ev)
			return lines
		}, []found{{auditchain.Altered, 4, 0}}},
		{"alter a line and its hash", func(t *testing.T, lines [][]byte) [][]byte {
			ev := parseEvent(t, lines[tenantLine(t, lines, 4)])
			ev["actor_id"] = "someone-else"
			prev, _ := auditchain.ParseHash(ev.str("prev_hash"))
			ev.rehash(t, prev)
			setLine(t, lines, 4, ev)
			return lines
		}, []found{{auditchain.BrokenLink, 5, 0}}},
		{"alter a line and rehash the rest of the chain", func(t *testing.T, lines [][]byte) [][]byte {
			ev := parseEvent(t, lines[tenantLine(t, lines, 4)])
			ev["actor_id"] = "someone-else"
			prev, _ := auditchain.ParseHash(ev.str("prev_hash"))
			for seq := uint64(4); seq <= lastA; seq++ {
				if seq > 4 {
					ev = parseEvent(t, lines[tenantLine(t, lines, seq)])
				}
				prev = ev.rehash(t, prev)
				setLine(t, lines, seq, ev)
			}
			return lines
		}, []found{{auditchain.UnsignedTail, 3, lastA}, {auditchain.BadCheckpoint, lastA, 0}}},
		{"delete a line", func(t *testing.T, lines [][]byte) [][]byte {
			return dropLine(t, lines, 5)
		}, []found{{auditchain.Missing, 5, 5}}},
		{"delete a duplicated line", func(t *testing.T, lines [][]byte) [][]byte {
			return dropLine(t, lines, 2)
		}, []found{{auditchain.Missing, 2, 2}}},
		{"reorder two lines of the chain", func(t *testing.T, lines [][]byte) [][]byte {
			five, six := parseEvent(t, lines[tenantLine(t, lines, 5)]), parseEvent(t, lines[tenantLine(t, lines, 6)])
			five["seq"], six["seq"] = json.Number("6"), json.Number("5")
			five["prev_hash"], six["prev_hash"] = six["prev_hash"], five["prev_hash"]
			five["hash"], six["hash"] = six["hash"], five["hash"]
			setLine(t, lines, 5, six)
			setLine(t, lines, 6, five)
			return lines
		}, []found{{auditchain.Altered, 5, 0}, {auditchain.Altered, 6, 0}}},
		{"reorder two lines of the chain and rehash them", func(t *testing.T, lines [][]byte) [][]byte {
			five, six := parseEvent(t, lines[tenantLine(t, lines, 5)]), parseEvent(t, lines[tenantLine(t, lines, 6)])
			five["seq"], six["seq"] = json.Number("6"), json.Number("5")
			prev, _ := auditchain.ParseHash(five.str("prev_hash"))
			prev = six.rehash(t, prev)
			five.rehash(t, prev)
			setLine(t, lines, 5, six)
			setLine(t, lines, 6, five)
			return lines
		}, []found{{auditchain.BrokenLink, 7, 0}}},
		{"insert a line", func(t *testing.T, lines [][]byte) [][]byte {
			ev := parseEvent(t, lines[tenantLine(t, lines, 5)])
			ev["id"], ev["message"] = "0193f1d2-0000-7000-8000-0000000001ff", "Token read"
			prev, _ := auditchain.ParseHash(ev.str("prev_hash"))
			ev.rehash(t, prev)
			return slices.Insert(lines, 0, ev.bytes(t))
		}, []found{{auditchain.Fork, 5, 0}, {auditchain.BrokenLink, 6, 0}}},
		{"insert a line and renumber the rest", func(t *testing.T, lines [][]byte) [][]byte {
			ev := parseEvent(t, lines[tenantLine(t, lines, 5)])
			ev["id"], ev["message"] = "0193f1d2-0000-7000-8000-0000000001ff", "Token read"
			prev, _ := auditchain.ParseHash(ev.str("prev_hash"))
			prev = ev.rehash(t, prev)
			rest := []event{}
			for seq := uint64(5); seq <= lastA; seq++ {
				rest = append(rest, parseEvent(t, lines[tenantLine(t, lines, seq)]))
			}
			for i, next := range rest {
				next["seq"] = json.Number(fmt.Sprint(6 + i))
				prev = next.rehash(t, prev)
			}
			for i := len(rest) - 1; i >= 0; i-- { // from the end: the last becomes last+1, and so on
				setLine(t, lines, uint64(5+i), rest[i])
			}
			return append(lines, ev.bytes(t))
		}, []found{{auditchain.UnsignedTail, 3, lastA + 1}, {auditchain.BadCheckpoint, lastA, 0}}},
		{"truncate the chain's tail under a checkpoint", func(t *testing.T, lines [][]byte) [][]byte {
			return dropLine(t, dropLine(t, lines, lastA), lastA-1)
		}, []found{{auditchain.UnsignedTail, 3, lastA - 2}, {auditchain.Missing, lastA - 1, lastA}}},
		{"truncate the file after line 5", func(t *testing.T, lines [][]byte) [][]byte {
			return lines[:tenantLine(t, lines, 5)+1]
		}, []found{{auditchain.UnsignedTail, 3, 5}}},
		{"append a line after the last checkpoint", func(t *testing.T, lines [][]byte) [][]byte {
			ev := parseEvent(t, lines[tenantLine(t, lines, lastA)])
			ev["id"], ev["seq"] = "0193f1d2-0000-7000-8000-0000000001ff", json.Number(fmt.Sprint(lastA+1))
			prev, _ := auditchain.ParseHash(parseEvent(t, lines[tenantLine(t, lines, lastA)]).str("hash"))
			ev.rehash(t, prev)
			return append(lines, ev.bytes(t))
		}, []found{{auditchain.UnsignedTail, lastA + 1, lastA + 1}}},
		{"forge a checkpoint's signature", func(t *testing.T, lines [][]byte) [][]byte {
			for i, b := range lines {
				ev := parseEvent(t, b)
				if cp, ok := ev["checkpoint"].(map[string]any); ok && ev.str("tenant_id") == fixtureTenantA && cp["seq"] == json.Number(fmt.Sprint(lastA)) {
					sig, err := base64.StdEncoding.DecodeString(cp["signature"].(string))
					if err != nil {
						t.Fatal(err)
					}
					sig[0] ^= 1
					cp["signature"] = base64.StdEncoding.EncodeToString(sig)
					lines[i] = ev.bytes(t)
				}
			}
			return lines
		}, []found{{auditchain.UnsignedTail, 3, lastA}, {auditchain.BadCheckpoint, lastA, 0}}},
		{"delete every line of the tenant", func(t *testing.T, lines [][]byte) [][]byte {
			for seq := uint64(1); seq <= lastA; seq++ {
				lines = dropLine(t, lines, seq)
			}
			return lines
		}, []found{{auditchain.Missing, 1, lastA}}},
		{"drop the chain's first line", func(t *testing.T, lines [][]byte) [][]byte {
			return dropLine(t, lines, 1)
		}, []found{{auditchain.Missing, 1, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := tc.tamper(t, cloneLines(orig))
			r := verifyLines(t, lines, fixtureTenantA, keys)
			var got []found
			for _, p := range r.Problems {
				got = append(got, found{p.Kind, p.Seq, p.LastSeq})
			}
			if r.OK || !slices.Equal(got, tc.want) {
				t.Errorf("problems %+v, want %+v (report %+v)", got, tc.want, r)
			}
			// The other tenant's chain is untouched.
			if r := verifyLines(t, lines, fixtureTenantB, keys); !r.OK {
				t.Errorf("tenant B: %+v", r)
			}
		})
	}
}

func cloneLines(lines [][]byte) [][]byte {
	out := make([][]byte, len(lines))
	for i, b := range lines {
		out[i] = slices.Clone(b)
	}
	return out
}

// TestVerifyExportTrustsOnlyGivenKeys: without the key that signed a
// checkpoint, the checkpoint is bad and the lines it covered unsigned.
func TestVerifyExportTrustsOnlyGivenKeys(t *testing.T) {
	lines, keys := readFixture(t)
	r := verifyLines(t, lines, fixtureTenantA, keys[1:]) // key 1 dropped
	want := []found{{auditchain.BadCheckpoint, 2, 0}}
	var got []found
	for _, p := range r.Problems {
		got = append(got, found{p.Kind, p.Seq, p.LastSeq})
	}
	if !slices.Equal(got, want) || r.SignedThrough != lastA {
		t.Errorf("problems %+v, want %+v (report %+v)", got, want, r)
	}
}

// TestReadExportRejectsMalformedLines: a line that is not an event is an
// *ExportError naming its line number, not a report.
func TestReadExportRejectsMalformedLines(t *testing.T) {
	lines, keys := readFixture(t)
	good := string(bytes.Join(lines[:3], nil))
	for _, tc := range []struct {
		name, line, want string
	}{
		{"not JSON", "tokenvault", "not a JSON object"},
		{"truncated JSON", `{"schema":"tokenvault.audit/v1",`, "unexpected end"},
		{"a JSON array", `[1,2]`, "not a JSON object"},
		{"no schema", `{"id":"x"}`, "no schema"},
		{"another schema", `{"schema":"tokenvault.audit/v9"}`, `unknown schema "tokenvault.audit/v9"`},
		{"a bad hash", `{"schema":"tokenvault.audit/v1","tenant_id":"t","created_at":"2030-01-02T03:04:05Z","seq":1,"prev_hash":"00","hash":"00"}`, "hash"},
		{"seq without hashes", `{"schema":"tokenvault.audit/v1","tenant_id":"t","created_at":"2030-01-02T03:04:05Z","seq":1}`, "needs seq"},
		{"hashes without seq", `{"schema":"tokenvault.audit/v1","tenant_id":"t","created_at":"2030-01-02T03:04:05Z","hash":"` + strings.Repeat("0", 64) + `"}`, "needs seq"},
		{"no created_at", `{"schema":"tokenvault.audit/v1","tenant_id":"t"}`, "created_at"},
		{"a bad time", `{"schema":"tokenvault.audit/v1","tenant_id":"t","created_at":"yesterday"}`, "yesterday"},
		{"a negative seq", `{"schema":"tokenvault.audit/v1","tenant_id":"t","created_at":"2030-01-02T03:04:05Z","seq":-1}`, "seq"},
		{"a checkpoint event without its checkpoint", `{"schema":"tokenvault.audit.checkpoint/v1","tenant_id":"t"}`, "without its checkpoint"},
		{"a line too long", `{"schema":"` + strings.Repeat("x", auditchain.MaxExportLine) + `"}`, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := good + "  \n" + tc.line + "\n" + good
			r, err := auditchain.VerifyExport(strings.NewReader(in), fixtureTenantA, keys, 1)
			var ee *auditchain.ExportError
			if !errors.As(err, &ee) || ee.Line != 5 || !strings.Contains(err.Error(), tc.want) || r != nil {
				t.Fatalf("VerifyExport = %v, %v; want an ExportError at line 5 saying %q", r, err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "auditchain: export line 5: ") {
				t.Errorf("error %q does not start with its line number", err)
			}
		})
	}
	// Nothing of the tenant: nothing verified, which is not a success.
	for _, in := range []string{"", "\n", good} {
		if r, err := auditchain.VerifyExport(strings.NewReader(in), "0193f1d2-0000-7000-8000-0000000000ff", keys, 1); !errors.Is(err, auditchain.ErrTenantNotInExport) || r != nil {
			t.Errorf("VerifyExport of a stream without the tenant = %v, %v", r, err)
		}
	}
	// A reader's own error is returned as it is.
	boom := errors.New("disk gone")
	_, err := auditchain.VerifyExport(io.MultiReader(strings.NewReader(good), iotest{boom}), fixtureTenantA, keys, 1)
	if !errors.Is(err, boom) {
		t.Errorf("a failing reader gave %v", err)
	}
}

type iotest struct{ err error }

func (r iotest) Read([]byte) (int, error) { return 0, r.err }

// FuzzVerifyExport: no export stream, however malformed, panics
// VerifyExport; a stream it reads gives a report whose problems are
// ordered and whose verdict is consistent with them; and every line of
// a stream it reads is canonical: it decodes, as the vault's event
// (fixtureEvent), to an event that encodes back to the line byte for
// byte, so what was verified is what any reader of the line sees.
func FuzzVerifyExport(f *testing.F) {
	lines, _ := readFixture(f)
	f.Add(bytes.Join(lines, nil))
	f.Add(bytes.Join(lines[:5], nil))
	for _, forged := range [][2]string{
		{`"message":"Token read"`, `"message":"FORGED","MESSAGE":"Token read"`},
		{`"actor_id":"`, `"actor_id":"x","actor_id":"`},
		{`"operation":`, `"note":"x","operation":`},
		{`"Token read"`, `"Tok\u0065n read"`},
		{`"seq":4,`, `"seq": 4,`},
	} {
		f.Add(bytes.Replace(bytes.Join(lines, nil), []byte(forged[0]), []byte(forged[1]), 1))
	}
	f.Add([]byte(`{"schema":"tokenvault.audit.checkpoint/v1","tenant_id":"0193f1d2-0000-7000-8000-00000000000a","checkpoint":{"seq":18446744073709551615}}`))
	f.Add([]byte("{}\n\n[]"))
	_, keys := readFixture(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, first := range []uint64{0, 1, 3} {
			r, err := auditchain.VerifyExport(bytes.NewReader(in), fixtureTenantA, keys, first)
			if err != nil {
				var ee *auditchain.ExportError
				if r != nil || !errors.Is(err, auditchain.ErrTenantNotInExport) && (!errors.As(err, &ee) || ee.Line < 1) {
					t.Fatalf("error %v (report %v)", err, r)
				}
				continue
			}
			if r.OK != (len(r.Problems) == 0) || r.TenantID != fixtureTenantA {
				t.Fatalf("report %+v", r)
			}
			for i, line := range bytes.Split(in, []byte("\n")) {
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				var ev fixtureEvent
				if err := json.Unmarshal(line, &ev); err != nil {
					t.Fatalf("line %d, accepted, does not decode: %v\n%s", i+1, err, line)
				}
				back, err := json.Marshal(ev)
				if err != nil || !bytes.Equal(back, line) {
					t.Fatalf("line %d, accepted, re-encodes otherwise (%v):\n%s\n%s", i+1, err, line, back)
				}
			}
			if !slices.IsSortedFunc(r.Problems, func(a, b auditchain.Problem) int {
				return cmp.Compare(a.Seq, b.Seq)
			}) {
				t.Fatalf("problems not in order: %+v", r.Problems)
			}
		}
	})
}
