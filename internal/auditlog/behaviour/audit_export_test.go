package auditlog_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// checkExported fails unless every line of want was exported, with its
// fields, and every duplicate is identical.
func checkExported(t *testing.T, want map[string]tokenvault.Log, got []tokenvault.AuditEvent) {
	t.Helper()
	seen := map[string]tokenvault.AuditEvent{}
	for _, ev := range got {
		if prev, ok := seen[ev.ID]; ok && !reflect.DeepEqual(prev, ev) {
			t.Errorf("event %s delivered twice with different contents: %+v and %+v", ev.ID, prev, ev)
		}
		seen[ev.ID] = ev
	}
	for id, l := range want {
		ev, ok := seen[id]
		if !ok {
			t.Errorf("log line %s (%s %s) was not exported", id, l.EntityType, l.Message)
			continue
		}
		wantEv := tokenvault.AuditEvent{Schema: tokenvault.AuditSchema, ID: l.ID, TenantID: l.TenantID, ActorID: l.ActorID,
			ActorType: l.ActorType, EntityType: l.EntityType, EntityID: l.EntityID, Operation: l.Operation, Message: l.Message,
			CreatedAt: l.CreatedAt.UTC()}
		if !ev.CreatedAt.Equal(wantEv.CreatedAt) {
			t.Errorf("event %s created_at %v, want %v", id, ev.CreatedAt, wantEv.CreatedAt)
		}
		ev.CreatedAt = wantEv.CreatedAt
		// Every line is exported chained (audit_export_chain_test.go
		// verifies the links).
		if ev.Seq == 0 || ev.PrevHash == nil || ev.Hash == nil {
			t.Errorf("event %s was exported without its link: %+v", id, ev)
		}
		ev.Seq, ev.PrevHash, ev.Hash = 0, nil, nil
		// Nor does a Log show a read's transform, channel and
		// application; the chain covers them, and
		// TestAuditExportVerifies verifies them through it.
		ev.Transform, ev.Channel, ev.Application = "", "", ""
		if ev != wantEv {
			t.Errorf("event %s = %+v, want %+v", id, ev, wantEv)
		}
	}
}

func openWithSinks(t *testing.T, s store.Store, master []byte, now func() time.Time, sinks ...tokenvault.AuditSink) *tokenvault.Vault {
	t.Helper()
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Store:       s,
		Now:         now,
		Keys:        tokenvault.KeyOptions{MasterKey: master},
		Retention:   tokenvault.RetentionOptions{SweepInterval: -1},
		AuditExport: tokenvault.AuditExportOptions{Sinks: sinks, Interval: 50 * time.Millisecond, Backoff: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return v
}

func tokenizeN(t *testing.T, v *tokenvault.Vault, key tokenvault.Credential, n int) {
	t.Helper()
	for i := range n {
		if _, err := v.Tokenize(ctx, key, tokenvault.TokenRequest{Type: "token", Data: i}); err != nil {
			t.Fatalf("Tokenize: %v", err)
		}
	}
}

// TestAuditExportDeliversEveryLine: every line of two tenants reaches two
// sinks, in the documented schema, and the queues end empty.
func TestAuditExportDeliversEveryLine(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			s := sk.Open(t)
			defer s.Close()
			a, b := &vaulttest.CaptureSink{SinkName: "a"}, &vaulttest.CaptureSink{SinkName: "b"}
			v := openWithSinks(t, s, vaulttest.NewMasterKey(), nil, a, b)
			defer v.Close()
			want := map[string]tokenvault.Log{}
			for _, name := range []string{"One", "Two"} {
				mgmt, creator := tenantWithCreator(t, v, name)
				tokenizeN(t, v, creator, 30)
				for id, l := range vaulttest.AllLogs(t, v, mgmt) {
					want[id] = l
				}
			}
			if len(want) < 60 {
				t.Fatalf("only %d log lines", len(want))
			}
			vaulttest.WaitExported(t, v)
			for _, sink := range []*vaulttest.CaptureSink{a, b} {
				checkExported(t, want, sink.Events())
			}
		})
	}
}

// TestAuditExportAtLeastOnceAcrossClose: the Vault closes while a sink is
// in the middle of a delivery (and another sink is down); after reopening,
// every line reaches both, duplicates identical.
func TestAuditExportAtLeastOnceAcrossClose(t *testing.T) {
	s := memory.New()
	master := vaulttest.NewMasterKey()
	slow, down := &vaulttest.CaptureSink{SinkName: "slow"}, &vaulttest.CaptureSink{SinkName: "down"}
	v := openWithSinks(t, s, master, nil, slow, down)
	mgmt, creator := tenantWithCreator(t, v, "Acme")
	vaulttest.WaitExported(t, v) // the first lines reach both
	slow.Set(false, true)
	blocked := slow.Blocked
	down.Set(true, false)
	tokenizeN(t, v, creator, 20)
	select {
	case <-blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery began")
	}
	st := v.Stats().AuditExport
	if len(st) != 2 || st[0].Sink != "slow" || st[0].Pending == 0 || st[1].Sink != "down" || st[1].Pending == 0 {
		t.Errorf("Stats().AuditExport = %+v, want both sinks pending", st)
	}
	if err := v.Close(); err != nil { // cuts the delivery in progress
		t.Fatal(err)
	}

	slow.Set(false, false)
	down.Set(false, false)
	v = openWithSinks(t, s, master, nil, slow, down)
	defer v.Close()
	tokenizeN(t, v, creator, 5)
	want := vaulttest.AllLogs(t, v, mgmt)
	vaulttest.WaitExported(t, v)
	for _, sink := range []*vaulttest.CaptureSink{slow, down} {
		checkExported(t, want, sink.Events())
	}
}

// TestAuditExportPacesPasses: while lines keep coming, an exporter woken by
// every commit still delivers in passes at least a quarter of a second
// apart (each pass costs the store a fold and a removal commit), and every
// line arrives. The bound is taken from the time the calls really took, so
// a slow machine only loosens it.
func TestAuditExportPacesPasses(t *testing.T) {
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			s := sk.Open(t)
			defer s.Close()
			sink := &vaulttest.CaptureSink{SinkName: "paced"}
			began := time.Now()
			v, err := tokenvault.Open(ctx, tokenvault.Options{
				Store:       s,
				Keys:        tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()},
				Retention:   tokenvault.RetentionOptions{SweepInterval: -1},
				AuditExport: tokenvault.AuditExportOptions{Sinks: []tokenvault.AuditSink{sink}, Interval: time.Hour},
			})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer v.Close()
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
			if err != nil {
				t.Fatal(err)
			}
			mgmt := boot.Application.Key
			app, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "rw",
				Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
			if err != nil {
				t.Fatal(err)
			}
			tok, err := v.Tokenize(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
			if err != nil {
				t.Fatal(err)
			}
			id := tok.(*tokenvault.Token).ID
			for range 300 { // reads: each appends a line and wakes the exporter
				if _, err := v.GetToken(ctx, app.Key, id); err != nil {
					t.Fatal(err)
				}
			}
			want := vaulttest.AllLogs(t, v, mgmt)
			vaulttest.WaitExported(t, v)
			elapsed := time.Since(began)
			checkExported(t, want, sink.Events())
			sink.Mu.Lock()
			calls := sink.Calls
			sink.Mu.Unlock()
			// One pass at the first wake, then one per 250 ms at most;
			// no pass finds a full batch (500 lines).
			if limit := int(elapsed/(250*time.Millisecond)) + 2; calls > limit {
				t.Errorf("%d deliveries in %v, want at most %d (passes at least 250 ms apart)", calls, elapsed, limit)
			}
		})
	}
}

// TestAuditExportNeverBlocksCalls: with a sink that never answers, calls
// succeed, the lag grows in Stats, and Close still returns.
func TestAuditExportNeverBlocksCalls(t *testing.T) {
	clk := vaulttest.NewClock()
	stuck := &vaulttest.CaptureSink{SinkName: "stuck"}
	stuck.Set(false, true)
	v := openWithSinks(t, memory.New(), vaulttest.NewMasterKey(), clk.Now, stuck)
	_, creator := tenantWithCreator(t, v, "Acme")
	tokenizeN(t, v, creator, 50)
	clk.Advance(time.Minute)
	st := v.Stats().AuditExport
	if len(st) != 1 || st[0].Pending < 50 || st[0].OldestAge < time.Minute {
		t.Errorf("Stats().AuditExport = %+v, want 52 or so pending for a minute", st)
	}
	closed := make(chan error)
	go func() { closed <- v.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return while a sink was stuck")
	}
}

// TestLogRetentionKeepsUnexportedLines: retention prunes no line a sink
// has yet to receive; once delivered, the lines go.
func TestLogRetentionKeepsUnexportedLines(t *testing.T) {
	clk := vaulttest.NewClock()
	sink := &vaulttest.CaptureSink{SinkName: "file"}
	sink.Set(true, false)
	s := memory.New()
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Store:       s,
		Now:         clk.Now,
		Keys:        tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()},
		Retention:   tokenvault.RetentionOptions{SweepInterval: -1, Logs: time.Hour},
		AuditExport: tokenvault.AuditExportOptions{Sinks: []tokenvault.AuditSink{sink}, Interval: 50 * time.Millisecond, Backoff: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	mgmt := boot.Application.Key
	before := vaulttest.AllLogs(t, v, mgmt)
	clk.Advance(2 * time.Hour)
	if n, err := v.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("Sweep with the sink down = %d, %v; want 0 pruned", n, err)
	}
	if got := vaulttest.AllLogs(t, v, mgmt); len(got) != len(before) {
		t.Fatalf("%d lines left of %d, want all kept until exported", len(got), len(before))
	}
	sink.Set(false, false)
	vaulttest.WaitExported(t, v)
	checkExported(t, before, sink.Events())
	if n, err := v.Sweep(ctx); err != nil || n != len(before) {
		t.Fatalf("Sweep after export = %d, %v; want %d pruned", n, err, len(before))
	}
}

// TestAuditSinkNamesAreChecked: names are store keys and metric labels.
func TestAuditSinkNamesAreChecked(t *testing.T) {
	for _, names := range [][]string{{""}, {"File"}, {"a/b"}, {"x", "x"}, {"this-name-is-much-longer-than-32-bytes"}} {
		var sinks []tokenvault.AuditSink
		for _, n := range names {
			sinks = append(sinks, &vaulttest.CaptureSink{SinkName: n})
		}
		v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}, AuditExport: tokenvault.AuditExportOptions{Sinks: sinks}})
		if err == nil {
			v.Close()
			t.Errorf("Open with audit sinks %q succeeded, want an error", names)
		}
	}
}

// TestAuditExportOfDeletedTenant: lines of a tenant deleted before they
// were delivered are not exported (the deletion removed them), their
// queue entries go, and the other tenant's lines are all delivered. The
// deleted tenant's final checkpoint is exported, read from where the
// deletion kept it (sys/chain-final/), and verifies with the vault's keys.
func TestAuditExportOfDeletedTenant(t *testing.T) {
	sink := &vaulttest.CaptureSink{SinkName: "file"}
	sink.Set(true, false)
	v := openWithSinks(t, memory.New(), vaulttest.NewMasterKey(), nil, sink)
	defer v.Close()
	gone, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Gone"})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Kept"})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.DeleteTenant(ctx, gone.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Sweep(ctx); err != nil { // finishes the deletion
		t.Fatal(err)
	}
	want := vaulttest.AllLogs(t, v, kept.Application.Key)
	sink.Set(false, false)
	vaulttest.WaitExported(t, v)
	got := sink.Events()
	checkExported(t, want, got)
	keys, err := v.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	final := 0
	for _, ev := range got {
		switch {
		case ev.TenantID != gone.Tenant.ID:
		case ev.Schema == tokenvault.AuditCheckpointSchema && ev.Checkpoint != nil && ev.Checkpoint.Final:
			final++
			if !checkpointVerifies(ev.Checkpoint, keys) || ev.Checkpoint.TenantID != gone.Tenant.ID || ev.Checkpoint.Seq == 0 {
				t.Errorf("the deleted tenant's final checkpoint does not verify: %+v", ev.Checkpoint)
			}
		default:
			t.Errorf("event %s of the deleted tenant was exported: %+v", ev.ID, ev)
		}
	}
	if final == 0 {
		t.Error("the deleted tenant's final checkpoint was not exported")
	}
}

// checkpointVerifies reports whether c's signature verifies with the key
// of keys it names.
func checkpointVerifies(c *auditchain.Checkpoint, keys []auditchain.PublicKey) bool {
	for _, k := range keys {
		if k.ID == c.KeyID {
			return c.VerifySignature(k.Key) == nil
		}
	}
	return false
}

// TestAuditExportBacklogCountedAtOpen: lines left queued by an earlier run,
// more than one delivery carries, show in Stats after Open.
func TestAuditExportBacklogCountedAtOpen(t *testing.T) {
	s, master := memory.New(), vaulttest.NewMasterKey()
	stuck := &vaulttest.CaptureSink{SinkName: "stuck"}
	stuck.Set(true, false)
	v := openWithSinks(t, s, master, nil, stuck)
	mgmt, creator := tenantWithCreator(t, v, "Acme")
	tokenizeN(t, v, creator, 600)
	v.Close()
	v = openWithSinks(t, s, master, nil, stuck)
	defer v.Close()
	want := len(vaulttest.AllLogs(t, v, mgmt))
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := v.Stats().AuditExport
		if len(st) == 1 && st[0].Pending == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Stats().AuditExport = %+v, want %d pending", st, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tenantWithCreator creates a tenant named name and, in it, an application
// that may create tokens: it returns the tenant's management key and the
// application's key.
func tenantWithCreator(t *testing.T, v *tokenvault.Vault, name string) (mgmt, creator tokenvault.Credential) {
	t.Helper()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "w", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
	if err != nil {
		t.Fatal(err)
	}
	return boot.Application.Key, app.Key
}
