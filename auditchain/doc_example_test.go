package auditchain

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// docExample is the worked example of docs/audit-chain.md: the bytes of
// the fixture export's first chained line, in hex, 32 bytes a row, then
// its hash, checked here against the fixture and LineHash.
func docExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/auditchain/export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Seq != 1 {
			continue
		}
		l := Line{TenantID: ev.TenantID, ID: ev.ID, CreatedAt: ev.CreatedAt, ActorID: ev.ActorID, ActorType: ev.ActorType,
			EntityType: ev.EntityType, EntityID: ev.EntityID, Operation: ev.Operation, Message: ev.Message,
			Transform: ev.Transform, Channel: ev.Channel, Application: ev.Application}
		raw := appendLineBytes(nil, *ev.PrevHash, ev.Seq, &l)
		var s strings.Builder
		for i := 0; i < len(raw); i += 32 {
			s.WriteString(hex.EncodeToString(raw[i:min(i+32, len(raw))]) + "\n")
		}
		h := LineHash(*ev.PrevHash, ev.Seq, &l)
		if h != *ev.Hash {
			t.Fatalf("the fixture's first line hashes to %s, not its hash %s", h, ev.Hash)
		}
		s.WriteString("\nSHA-256: " + h.String() + "\n")
		s.WriteString("created_at: " + l.CreatedAt.Format(time.RFC3339Nano) + "\n")
		return s.String()
	}
	t.Fatal("no line with seq 1 in the fixture")
	return ""
}

// TestDocWorkedExample: the worked example in docs/audit-chain.md (between
// its markers) is the fixture's first line's bytes and hash.
func TestDocWorkedExample(t *testing.T) {
	want := docExample(t)
	doc, err := os.ReadFile("../docs/audit-chain.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- worked-example -->\n```\n", "```\n<!-- /worked-example -->"
	_, rest, ok := strings.Cut(string(doc), begin)
	got, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/audit-chain.md has no worked example between %q and %q", begin, end)
	}
	if got != want {
		t.Errorf("docs/audit-chain.md's worked example is out of date; it should read:\n%s", want)
	}
}
