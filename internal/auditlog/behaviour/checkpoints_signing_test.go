package auditlog_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/syncbuf"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestCheckpointsCoverTheChain: with a checkpoint every 3 lines, lines
// written in commits and as appended reads (bbolt) leave a checkpoint at
// every third seq past the first signed one, each over the hash of the
// line at its seq and verifying with the published key; the head records
// the last.
func TestCheckpointsCoverTheChain(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"memory", func(*testing.T) store.Store { return memory.New() }},
		{"bolt", func(t *testing.T) store.Store { return openBoltStore(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := openChecked(t, tc.open(t), nil, tokenvault.AuditChainOptions{CheckpointEvery: 3, CheckpointInterval: -1}, nil)
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Signed"})
			if err != nil {
				t.Fatal(err)
			}
			tid := boot.Tenant.ID
			first, err := v.SignAuditChain(ctx, tid)
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				if _, err := v.GetTenant(ctx, boot.Application.Key); err != nil {
					t.Fatal(err)
				}
			}
			if err := vaulttest.LinkNow(ctx, v); err != nil { // chains the appended reads
				t.Fatal(err)
			}
			cps := storedCheckpoints(t, v, tid)
			var seqs []uint64
			for _, c := range cps {
				seqs = append(seqs, c.Seq)
			}
			want := []uint64{first.Seq, first.Seq + 3, first.Seq + 6, first.Seq + 9}
			if len(seqs) != len(want) || seqs[0] != want[0] || seqs[1] != want[1] || seqs[2] != want[2] || seqs[3] != want[3] {
				t.Fatalf("checkpoints at %v, want %v", seqs, want)
			}
			verifyAll(t, v, tid, cps)
			h := headOf(t, v, tid)
			if h.Seq != first.Seq+10 || h.SignedSeq != first.Seq+9 || h.KeyID != first.KeyID {
				t.Errorf("head = seq %d signed %d by %s; want %d, %d, %s", h.Seq, h.SignedSeq, h.KeyID, first.Seq+10, first.Seq+9, first.KeyID)
			}
		})
	}
}

// TestTimedCheckpoints: the timed pass signs a tenant's head once its
// oldest unsigned line is CheckpointInterval old, not a second before,
// visiting only tenants with an unsigned tail (through their marks, which
// a checkpoint removes); a mark of a deleted tenant is dropped.
func TestTimedCheckpoints(t *testing.T) {
	clock := vaulttest.NewClock()
	// No background pass: the test runs it (the marks are kept anyway).
	v := openChecked(t, memory.New(), clock, tokenvault.AuditChainOptions{CheckpointEvery: -1, CheckpointInterval: -1}, nil)
	var boots []*tokenvault.TenantBootstrap
	for _, name := range []string{"Busy", "Quiet", "Doomed"} {
		b, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		boots = append(boots, b)
	}
	if got := unsignedMarks(t, v); len(got) != 3 {
		t.Fatalf("marks after three new tenants = %v; want one each", got)
	}
	clock.Advance(time.Minute)
	if n, err := testseam.Of(v).Checkpoints.SignOld(ctx, time.Minute); err != nil || n != 3 {
		t.Fatalf("checkpointOld a minute after = %d, %v; want the three tenants signed", n, err)
	}
	if got := unsignedMarks(t, v); len(got) != 0 {
		t.Fatalf("marks after the checkpoints = %v", got)
	}
	busy := boots[0].Tenant.ID
	lineAt := clock.Now()
	for range 3 {
		if _, err := v.GetTenant(ctx, boots[0].Application.Key); err != nil {
			t.Fatal(err)
		}
		clock.Advance(10 * time.Second)
	}
	if got := unsignedMarks(t, v); len(got) != 1 || !strings.HasSuffix(got[0], "/"+busy) || got[0][:16] != barrier.TimeKey(lineAt) {
		t.Fatalf("marks = %v; want one of %s at its first unsigned line (%s)", got, busy, barrier.TimeKey(lineAt))
	}
	clock.Advance(lineAt.Add(time.Minute - time.Second).Sub(clock.Now()))
	if n, err := testseam.Of(v).Checkpoints.SignOld(ctx, time.Minute); err != nil || n != 0 {
		t.Fatalf("checkpointOld 59 s after the line = %d, %v; want none", n, err)
	}
	clock.Advance(time.Second)
	if n, err := testseam.Of(v).Checkpoints.SignOld(ctx, time.Minute); err != nil || n != 1 {
		t.Fatalf("checkpointOld a minute after the line = %d, %v; want one", n, err)
	}
	h := headOf(t, v, busy)
	if h.SignedSeq != h.Seq || !h.SignedAt.Equal(clock.Now()) {
		t.Errorf("head of %s = seq %d signed %d at %v; want signed now", busy, h.Seq, h.SignedSeq, h.SignedAt)
	}
	verifyAll(t, v, busy, storedCheckpoints(t, v, busy))

	// A line of the doomed tenant, then its deletion: the final
	// checkpoint takes its mark with it.
	if _, err := v.GetTenant(ctx, boots[2].Application.Key); err != nil {
		t.Fatal(err)
	}
	if err := v.DeleteTenant(ctx, boots[2].Tenant.ID); err != nil {
		t.Fatal(err)
	}
	if got := unsignedMarks(t, v); len(got) != 0 {
		t.Errorf("marks after the deletion = %v", got)
	}
	// A mark left behind (of a tenant gone) is dropped by the pass.
	if err := testseam.Of(v).Work.Update(ctx, func(tx *unit.Tx) error {
		return tx.PutIndex(barrier.Tenant(boots[2].Tenant.ID).UnsignedChain(barrier.TimeKey(lineAt)))
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := testseam.Of(v).Checkpoints.SignOld(ctx, time.Minute); err != nil || n != 0 || len(unsignedMarks(t, v)) != 0 {
		t.Errorf("checkpointOld with a stale mark = %d, %v, marks %v; want it dropped", n, err, unsignedMarks(t, v))
	}
}

// TestCheckpointerSignsInTheBackground: with the real clock and an
// interval of 2 s, the background pass signs a line's head on its own,
// at least the interval after the line.
func TestCheckpointerSignsInTheBackground(t *testing.T) {
	v := openChecked(t, memory.New(), nil, tokenvault.AuditChainOptions{CheckpointEvery: -1, CheckpointInterval: 2 * time.Second}, nil)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Timed"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	if _, err := v.SignAuditChain(ctx, tid); err != nil {
		t.Fatal(err)
	}
	wrote := time.Now()
	if _, err := v.GetTenant(ctx, boot.Application.Key); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		h := headOf(t, v, tid)
		if h.SignedSeq == h.Seq {
			if h.SignedAt.Sub(wrote) < 2*time.Second {
				t.Errorf("signed %v after the line, before the interval", h.SignedAt.Sub(wrote))
			}
			verifyAll(t, v, tid, storedCheckpoints(t, v, tid))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint 30 s after the line: head %+v", h)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestFinalCheckpoint: deleting a tenant signs its head in a final
// checkpoint, in the transaction that removes its keyring, kept at
// sys/chain-final/<tid> (sealed by the system keyring) after everything
// else of the tenant is gone, and queued for audit export.
func TestFinalCheckpoint(t *testing.T) {
	clock := vaulttest.NewClock()
	sink := &vaulttest.CaptureSink{SinkName: "walk"}
	sink.Set(true, false) // its queue keeps what is queued
	v := openChecked(t, memory.New(), clock, tokenvault.AuditChainOptions{}, nil, sink)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Doomed"})
	if err != nil {
		t.Fatal(err)
	}
	tid := boot.Tenant.ID
	if _, err := v.GetTenant(ctx, boot.Application.Key); err != nil {
		t.Fatal(err)
	}
	head := headOf(t, v, tid)
	clock.Advance(time.Second)
	if err := v.DeleteTenant(ctx, tid); err != nil {
		t.Fatal(err)
	}
	var rec auditlog.CheckpointRecord
	var queued []string
	err = testseam.Of(v).Work.View(ctx, func(tx *unit.Tx) error {
		ok, err := tx.GetRecord(barrier.FinalCheckpoint(tid), &rec)
		if err == nil && !ok {
			t.Fatal("no final checkpoint")
		}
		if err != nil {
			return err
		}
		return tx.ScanKeys(barrier.AuditQueue(sink.Name()), func(_ barrier.Key, rest string) error {
			queued = append(queued, rest)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	c := rec.Checkpoint()
	if !c.Final || c.TenantID != tid || c.Seq != head.Seq || c.Hash != head.Hash || !c.CreatedAt.Equal(clock.Now()) {
		t.Errorf("final checkpoint = %+v; want final over seq %d hash %s, now", c, head.Seq, head.Hash)
	}
	keys, err := v.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifySignature(keys[0].Key); err != nil {
		t.Errorf("the final checkpoint does not verify: %v", err)
	}
	want := barrier.TimeKey(clock.Now()) + "/" + tid + "/checkpoint-" + barrier.SeqKey(head.Seq)
	found := false
	for _, q := range queued {
		found = found || q == want
	}
	if !found {
		t.Errorf("the final checkpoint is not queued for export as %s: %v", want, queued)
	}
	if _, err := v.SignAuditChain(ctx, tid); tokenvault.ErrorKind(err) != tokenvault.NotFound {
		t.Errorf("SignAuditChain of the deleted tenant = %v, want NotFound", err)
	}
}

// TestAuditKeyNeverStoredOrLoggedInTheClear: the private keys (seeds and
// expanded keys, raw, hex or base64), the one in use and a retired one,
// appear in no value of the store and no line of the log, through
// checkpoints, a rotation and a master key rotation.
func TestAuditKeyNeverStoredOrLoggedInTheClear(t *testing.T) {
	s := memory.New()
	var log syncbuf.Buffer
	v := openChecked(t, s, vaulttest.NewClock(), tokenvault.AuditChainOptions{CheckpointEvery: 2}, &log)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Secretive"})
	if err != nil {
		t.Fatal(err)
	}
	var secrets [][]byte
	keep := func() {
		priv := testseam.Of(v).AuditSigner().Key
		for _, b := range [][]byte{priv.Seed(), priv} {
			secrets = append(secrets, b, []byte(hex.EncodeToString(b)), []byte(base64.StdEncoding.EncodeToString(b)), []byte(base64.RawURLEncoding.EncodeToString(b)))
		}
	}
	keep()
	for range 3 {
		if _, err := v.GetTenant(ctx, boot.Application.Key); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.RotateAuditKey(ctx); err != nil {
		t.Fatal(err)
	}
	keep()
	if _, err := v.SignAuditChain(ctx, boot.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	if err := v.RotateMasterKey(ctx, bytes.Repeat([]byte{8}, 32)); err != nil {
		t.Fatal(err)
	}
	if err := v.DeleteTenant(ctx, boot.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = s.View(ctx, func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, raw []byte) error {
			n++
			for _, sec := range secrets {
				if bytes.Contains(raw, sec) || bytes.Contains(k, sec) {
					t.Errorf("store key %s holds a private key in the clear", k)
				}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range secrets {
		if strings.Contains(log.String(), string(sec)) {
			t.Errorf("the log holds a private key in the clear")
		}
	}
	if n == 0 {
		t.Fatal("walked an empty store")
	}
}

// TestTimedCheckpointsPastABrokenTenant: the timed pass signs tenants in
// batches, one transaction each; a tenant whose head cannot be read fails
// the batch, and then each tenant is tried alone, so the others are
// signed and the pass reports the one error.
func TestTimedCheckpointsPastABrokenTenant(t *testing.T) {
	clock := vaulttest.NewClock()
	v := openChecked(t, memory.New(), clock, tokenvault.AuditChainOptions{CheckpointEvery: -1, CheckpointInterval: -1}, nil)
	var tids []string
	for _, name := range []string{"One", "Broken", "Three"} {
		b, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		tids = append(tids, b.Tenant.ID)
	}
	linkForTest(t, v)
	if err := testseam.Of(v).Work.Update(ctx, func(tx *unit.Tx) error {
		return tx.PutPlain(barrier.Tenant(tids[1]).ChainHead(), []byte("not sealed"))
	}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	n, err := testseam.Of(v).Checkpoints.SignOld(ctx, time.Minute)
	if n != 2 || err == nil {
		t.Fatalf("checkpointOld = %d, %v; want the two good tenants signed and an error", n, err)
	}
	for _, tid := range []string{tids[0], tids[2]} {
		if h := headOf(t, v, tid); h.SignedSeq != h.Seq || h.Seq == 0 {
			t.Errorf("tenant %s: head seq %d signed %d", tid, h.Seq, h.SignedSeq)
		}
	}
	if got := unsignedMarks(t, v); len(got) != 1 || !strings.HasSuffix(got[0], tids[1]) {
		t.Errorf("marks = %v; want the broken tenant's only", got)
	}
}
