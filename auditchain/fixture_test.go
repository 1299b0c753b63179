package auditchain_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
)

var update = flag.Bool("update", false, "regenerate testdata/auditchain from its fixed clock, keys and ids")

// The fixture chain, testdata/auditchain: an audit export (export.jsonl,
// as the file sink writes it: one event a line, tenants mixed, one line
// delivered twice) and the keys that sign its checkpoints (keys.json, as
// GET /audit/keys serves them). Everything in it is fixed (ids, clock,
// key seeds), so -update writes the same bytes every time; docs/audit-chain.md
// works its first line through by hand.
const (
	fixtureDir     = "../testdata/auditchain"
	fixtureExport  = fixtureDir + "/export.jsonl"
	fixtureKeys    = fixtureDir + "/keys.json"
	fixtureTenantA = "0193f1d2-0000-7000-8000-00000000000a"
	fixtureTenantB = "0193f1d2-0000-7000-8000-00000000000b"
	// lastA is the last seq of tenant A's chain, which a checkpoint signs.
	lastA = 8
)

// fixtureEvent is an export event as the vault writes it
// (tokenvault.AuditEvent is the same type).
type fixtureEvent = auditchain.Event

// fixtureKey is fixed signing key n (1 or 2).
func fixtureKey(n int) ed25519.PrivateKey {
	seed := sha256.Sum256(fmt.Appendf(nil, "tokenvault audit chain fixture key %d", n))
	return ed25519.NewKeyFromSeed(seed[:])
}

// fixtureTime is the fixed clock: i steps of 1.25 s after 2030-01-02T03:04:05.000000123Z.
func fixtureTime(i int) time.Time {
	return time.Date(2030, 1, 2, 3, 4, 5, 123, time.UTC).Add(time.Duration(i) * 1250 * time.Millisecond)
}

// fixtureChain builds the fixture: the export's events in the order they
// are written, and the published keys.
//
// Tenant A: 8 lines; a checkpoint at 2 signed with key 1; the key rotated
// to key 2 (key 1 retired), which line 8 records; a checkpoint at 8
// signed with key 2. Line 4 is
// a read of a token's data (transform, channel, application). Tenant B: 3
// lines, a checkpoint at 2 with key 1, then the tenant deleted: a final
// checkpoint at 3, with key 1 too. A line written before tenant A's chain began
// (no seq) comes first, and line 2 of tenant A is delivered twice.
func fixtureChain() ([]fixtureEvent, []auditchain.PublicKey) {
	k1, k2 := fixtureKey(1), fixtureKey(2)
	rotatedAt := fixtureTime(8)
	keys := []auditchain.PublicKey{
		{ID: auditchain.KeyID(k1.Public().(ed25519.PublicKey)), Algorithm: "Ed25519", Key: k1.Public().(ed25519.PublicKey),
			CreatedAt: fixtureTime(-100), RetiredAt: &rotatedAt},
		{ID: auditchain.KeyID(k2.Public().(ed25519.PublicKey)), Algorithm: "Ed25519", Key: k2.Public().(ed25519.PublicKey),
			CreatedAt: rotatedAt},
	}
	type lineSpec struct {
		tenant                                   string
		actor, actorType, entityType, entity, op string
		msg, transform, channel, app             string
	}
	const app = "0193f1d2-0000-7000-8000-0000000000a1"
	tokA := "0193f1d2-0000-7000-8000-0000000000a2"
	specs := []lineSpec{
		{tenant: fixtureTenantA, actor: "", actorType: "operator", entityType: "tenant", entity: fixtureTenantA, op: "create", msg: "Tenant created"},
		{tenant: fixtureTenantB, actor: "", actorType: "operator", entityType: "tenant", entity: fixtureTenantB, op: "create", msg: "Tenant created"},
		{tenant: fixtureTenantA, actor: app, actorType: "application", entityType: "token", entity: tokA, op: "create", msg: "Token created"},
		{tenant: fixtureTenantB, actor: "", actorType: "operator", entityType: "application", entity: app, op: "create", msg: "Application created"},
		{tenant: fixtureTenantA, actor: app, actorType: "application", entityType: "token", entity: tokA, op: "update", msg: "Token updated"},
		{tenant: fixtureTenantA, actor: app, actorType: "application", entityType: "token", entity: tokA, op: "read", msg: "Token read",
			transform: "mask", channel: "api", app: app},
		{tenant: fixtureTenantB, actor: "", actorType: "system", entityType: "tenant", entity: fixtureTenantB, op: "delete", msg: "Tenant deleted"},
		{tenant: fixtureTenantA, actor: app, actorType: "application", entityType: "token", entity: tokA, op: "read", msg: "Token detokenized",
			transform: "plain", channel: "detokenize", app: app},
		{tenant: fixtureTenantA, actor: app, actorType: "application", entityType: "token", entity: tokA, op: "delete", msg: "Token deleted"},
		{tenant: fixtureTenantA, actor: "", actorType: "system", entityType: "token", entity: tokA, op: "delete", msg: "Expired token swept"},
	}
	heads := map[string]struct {
		seq  uint64
		hash auditchain.Hash
	}{}
	var events []fixtureEvent
	checkpoint := func(tid string, at int, key ed25519.PrivateKey, final bool) {
		h := heads[tid]
		c := auditchain.Checkpoint{TenantID: tid, Seq: h.seq, Hash: h.hash, CreatedAt: fixtureTime(at), Final: final}
		c.Sign(key)
		id := fmt.Sprintf("checkpoint-%s-%016x", tid, c.Seq)
		if final {
			id += "-final"
		}
		events = append(events, fixtureEvent{Schema: auditchain.CheckpointSchema, ID: id, TenantID: tid, CreatedAt: c.CreatedAt, Checkpoint: &c})
	}
	// A line from before tenant A's chain began: exported without a link.
	events = append(events, fixtureEvent{Schema: auditchain.LineSchema, ID: "0193f1d2-0000-7000-8000-000000000100",
		TenantID: fixtureTenantA, ActorType: "operator", EntityType: "tenant", EntityID: fixtureTenantA, Operation: "update",
		Message: "Tenant updated", CreatedAt: fixtureTime(-1)})
	addLine := func(i int, s lineSpec) {
		h := heads[s.tenant]
		l := auditchain.Line{TenantID: s.tenant, ID: fmt.Sprintf("0193f1d2-0000-7000-8000-%012x", 0x101+i), CreatedAt: fixtureTime(i),
			ActorID: s.actor, ActorType: s.actorType, EntityType: s.entityType, EntityID: s.entity, Operation: s.op, Message: s.msg,
			Transform: s.transform, Channel: s.channel, Application: s.app}
		seq, prev := h.seq+1, h.hash
		hash := auditchain.LineHash(prev, seq, &l)
		heads[s.tenant] = struct {
			seq  uint64
			hash auditchain.Hash
		}{seq, hash}
		events = append(events, fixtureEvent{Schema: auditchain.LineSchema, ID: l.ID, TenantID: l.TenantID, ActorID: l.ActorID,
			ActorType: l.ActorType, EntityType: l.EntityType, EntityID: l.EntityID, Operation: l.Operation, Message: l.Message,
			CreatedAt: l.CreatedAt, Transform: l.Transform, Channel: l.Channel, Application: l.Application,
			Seq: seq, PrevHash: &prev, Hash: &hash})
	}
	for i, s := range specs {
		addLine(i, s)
		switch i {
		case 3: // tenant B at 2, tenant A at 2, with key 1
			checkpoint(fixtureTenantB, i, k1, false)
			checkpoint(fixtureTenantA, i, k1, false)
		case 6: // tenant B deleted: its final checkpoint, before the rotation
			checkpoint(fixtureTenantB, i, k1, true)
		}
	}
	// The key rotated (at fixtureTime(8)): the next checkpoint of tenant A
	// records it in the chain with a line of its own, then signs with the
	// new key, as the vault does.
	rot := lineSpec{tenant: fixtureTenantA, actorType: "system", entityType: "tenant", entity: fixtureTenantA, op: "update",
		msg: "Audit signing key rotated from " + keys[0].ID + " to " + keys[1].ID}
	addLine(len(specs), rot)
	checkpoint(fixtureTenantA, len(specs), k2, false)
	// At-least-once: line 2 of tenant A delivered again, after the rest.
	events = append(events, events[3])
	return events, keys
}

// encodeFixture renders the fixture files.
func encodeFixture(t *testing.T) (export, keys []byte) {
	t.Helper()
	events, pub := fixtureChain()
	var b bytes.Buffer
	for _, ev := range events {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	k, err := json.MarshalIndent(struct {
		Keys []auditchain.PublicKey `json:"keys"`
	}{pub}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), append(k, '\n')
}

// TestFixtureIsCurrent: testdata/auditchain is what fixtureChain builds
// (go test ./auditchain -run TestFixtureIsCurrent -update rewrites it).
func TestFixtureIsCurrent(t *testing.T) {
	export, keys := encodeFixture(t)
	if *update {
		if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{fixtureExport: export, fixtureKeys: keys} {
			if err := os.WriteFile(name, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, want := range map[string][]byte{fixtureExport: export, fixtureKeys: keys} {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (go test ./auditchain -run TestFixtureIsCurrent -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the fixture generator writes: run go test ./auditchain -run TestFixtureIsCurrent -update", filepath.Base(name))
		}
	}
}

// readFixture returns the fixture's export lines and keys.
func readFixture(t testing.TB) ([][]byte, []auditchain.PublicKey) {
	t.Helper()
	b, err := os.ReadFile(fixtureExport)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := os.ReadFile(fixtureKeys)
	if err != nil {
		t.Fatal(err)
	}
	var keys struct {
		Keys []auditchain.PublicKey `json:"keys"`
	}
	if err := json.Unmarshal(kb, &keys); err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	return lines, keys.Keys
}

// verifyLines runs VerifyExport on lines joined.
func verifyLines(t *testing.T, lines [][]byte, tenant string, keys []auditchain.PublicKey) *auditchain.Report {
	t.Helper()
	r, err := auditchain.VerifyExport(bytes.NewReader(bytes.Join(lines, nil)), tenant, keys, 1)
	if err != nil {
		t.Fatalf("VerifyExport: %v", err)
	}
	return r
}

// TestFixtureVerifies: both tenants' chains in the fixture verify, to
// their last line, signed through, tenant B's closed by its final
// checkpoint.
func TestFixtureVerifies(t *testing.T) {
	lines, keys := readFixture(t)
	for _, tc := range []struct {
		tenant      string
		lines       int
		checkpoints int
		final       bool
	}{{fixtureTenantA, lastA, 2, false}, {fixtureTenantB, 3, 2, true}} {
		r := verifyLines(t, lines, tc.tenant, keys)
		if !r.OK || r.Lines != tc.lines || r.FirstSeq != 1 || r.LastSeq != uint64(tc.lines) ||
			r.SignedThrough != uint64(tc.lines) || r.Checkpoints != tc.checkpoints || r.Final != tc.final {
			t.Errorf("tenant %s: %+v", tc.tenant, r)
		}
	}
	// The lines in any order verify the same (at-least-once delivery
	// keeps no order across batches).
	shuffled := slices.Clone(lines)
	slices.Reverse(shuffled)
	if r := verifyLines(t, shuffled, fixtureTenantA, keys); !r.OK || r.Lines != lastA {
		t.Errorf("reversed file: %+v", r)
	}
}
