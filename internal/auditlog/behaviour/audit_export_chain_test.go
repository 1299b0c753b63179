package auditlog_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestAuditEventMatchesFixture: the fixture chain (testdata/auditchain,
// which auditchain's tests and docs/audit-chain.md use) is in
// AuditEvent's JSON form to the byte: each of its lines decodes to an
// AuditEvent that encodes back to the same line, so what the vault's
// sinks write is what the fixture holds.
func TestAuditEventMatchesFixture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(vaulttest.RepoRoot(t), "testdata", "auditchain", "export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var ev tokenvault.AuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		back, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, line) {
			t.Errorf("the fixture's line\n%s\nencodes back as\n%s", line, back)
		}
		schemas[ev.Schema]++
	}
	if schemas[tokenvault.AuditSchema] == 0 || schemas[tokenvault.AuditCheckpointSchema] == 0 {
		t.Errorf("the fixture holds %v; want lines and checkpoints", schemas)
	}
}

// exportLines renders events as the file sink does: JSON lines.
func exportLines(t *testing.T, events []tokenvault.AuditEvent) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, ev := range events {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestAuditExportVerifies: what a Vault exports of its tenants' chains
// (lines written in commits and, on bbolt, reads appended and chained
// later; checkpoints; a deleted tenant's final checkpoint) verifies
// offline with auditchain.VerifyExport and the published keys, to the
// chain's last line.
func TestAuditExportVerifies(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			s := sk.Open(t)
			defer s.Close()
			sink := &vaulttest.CaptureSink{SinkName: "siem"}
			v := openWithSinks(t, s, vaulttest.NewMasterKey(), nil, sink)
			defer v.Close()
			var tids []string
			for _, name := range []string{"One", "Two"} {
				boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: name})
				if err != nil {
					t.Fatal(err)
				}
				app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
					Name: "rw", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
				if err != nil {
					t.Fatal(err)
				}
				for i := range 10 {
					tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: i})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := v.GetToken(ctx, app.Key, tok.ID); err != nil { // a read: appended on bbolt
						t.Fatal(err)
					}
				}
				tids = append(tids, boot.Tenant.ID)
			}
			// Once exported, every line is chained (the exporter exports
			// only chained lines): a checkpoint now covers them all.
			vaulttest.WaitExported(t, v)
			for _, tid := range tids {
				if _, err := v.SignAuditChain(ctx, tid); err != nil {
					t.Fatal(err)
				}
			}
			vaulttest.WaitExported(t, v)
			// The second tenant is deleted once its lines are out: its final
			// checkpoint follows them, read from where the deletion kept it.
			if err := v.DeleteTenant(ctx, tids[1]); err != nil {
				t.Fatal(err)
			}
			vaulttest.WaitExported(t, v)
			keys, err := v.AuditKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			export := exportLines(t, sink.Events())
			var reports []*auditchain.Report
			for i, tid := range tids {
				r, err := auditchain.VerifyExport(bytes.NewReader(export), tid, keys, 1)
				if err != nil {
					t.Fatal(err)
				}
				// A tenant's lines: its creation, its application's, 10
				// creates and 10 reads at least.
				if !r.OK || r.Lines < 22 || r.SignedThrough != r.LastSeq || r.Final != (i == 1) {
					t.Errorf("tenant %d: %+v", i, r)
				}
				reports = append(reports, r)
			}
			// The export holds the whole chain: the store's head is its.
			live, err := v.VerifyAuditChain(ctx, tids[0])
			if err != nil || !live.OK || live.LastSeq != reports[0].LastSeq || live.Head != reports[0].Head {
				t.Errorf("VerifyAuditChain = %+v, %v; the export's report %+v", live, err, reports[0])
			}
		})
	}
}

// TestAuditExportOfDeletedTenantVerifiesAfterRotation: a tenant deleted
// after the signing key was rotated (its chain last signed with the old
// key) leaves a final export that verifies, to the end its final
// checkpoint signs: the deletion writes no line the export could not
// deliver (the keyring that opens the tenant's lines goes in the same
// transaction).
func TestAuditExportOfDeletedTenantVerifiesAfterRotation(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			s := sk.Open(t)
			defer s.Close()
			sink := &vaulttest.CaptureSink{SinkName: "siem"}
			v := openWithSinks(t, s, vaulttest.NewMasterKey(), nil, sink)
			defer v.Close()
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Doomed"})
			if err != nil {
				t.Fatal(err)
			}
			tid := boot.Tenant.ID
			app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
				Name: "w", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"}); err != nil {
				t.Fatal(err)
			}
			vaulttest.WaitExported(t, v)
			old, err := v.SignAuditChain(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			vaulttest.WaitExported(t, v)
			rotated, err := v.RotateAuditKey(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.DeleteTenant(ctx, tid); err != nil {
				t.Fatal(err)
			}
			vaulttest.WaitExported(t, v)
			keys, err := v.AuditKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			r, err := auditchain.VerifyExport(bytes.NewReader(exportLines(t, sink.Events())), tid, keys, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !r.OK || !r.Final || r.SignedThrough != r.LastSeq || r.LastSeq < old.Seq {
				t.Errorf("the deleted tenant's export: %+v", r)
			}
			// The final checkpoint is signed with the new key.
			var final *auditchain.Checkpoint
			for _, ev := range sink.Events() {
				if c := ev.Checkpoint; c != nil && c.TenantID == tid && c.Final {
					final = c
				}
			}
			if final == nil || final.KeyID != rotated.ID || final.Seq != r.LastSeq {
				t.Errorf("final checkpoint %+v; want one at seq %d signed with %s", final, r.LastSeq, rotated.ID)
			}
		})
	}
}
