package records_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/counts"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/idempotency"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/records/recordfix"
	"github.com/tokenvault/tokenvault/internal/reseal"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// recordV0 is the JSON the code before record format version 1 stored rec
// as (the version 0 types of records_<kind>.go, and of tokens, log lines
// and applications), for a test to write a store as that code did.
func recordV0(t *testing.T, key barrier.Key, rec recordCodec) []byte {
	t.Helper()
	var v any
	switch r := rec.(type) {
	case *tokens.Record:
		v = r.V0()
	case *auditlog.LineRecord:
		v = auditlog.LogOf(key, r) // a log line's JSON was its stored form
	case *access.ApplicationRecord:
		v = recordfix.ApplicationV0(r)
	case *access.KeyRef:
		v = access.KeyRefV0(*r)
	case *counts.Record:
		v = counts.RecordV0(*r)
	case *tokens.LegacyCVCScan:
		v = tokens.LegacyCVCScanV0(*r)
	case *tokens.ListBuild:
		v = tokens.ListBuildV0(*r)
	case *tokens.FingerprintPlace:
		v = tokens.FingerprintPlaceV0(*r)
	case *reseal.State:
		v = reseal.StateV0(*r)
	case *tenants.DeletionState:
		v = tenants.DeletionStateV0(*r)
	case *tenants.Record:
		v = tenants.RecordV0{ID: r.ID, Name: r.Name, OwnerID: r.OwnerID, CreatedBy: r.CreatedBy,
			CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt}
	case *tenants.InvitationRecord:
		v = tenants.InvitationRecordV0(*r)
	case *reactors.FormulaRecord:
		v = reactors.FormulaRecordV0(*r)
	case *reactors.Record:
		v = reactors.RecordV0(*r)
	case *tenants.MemberRecord:
		m := tenants.MemberRecordV0{ID: r.ID, TenantID: r.TenantID, Role: r.Role, CreatedAt: r.CreatedAt}
		m.User.ID, m.User.Email, m.User.FirstName, m.User.LastName, m.User.Picture = r.UserID, r.Email, r.FirstName, r.LastName, r.Picture
		v = m
	case *reactors.ProxyRecord:
		v = reactors.ProxyRecordV0{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Key: r.Key, DestinationURL: r.DestinationURL,
			RequestTransform: r.RequestTransform, ResponseTransform: r.ResponseTransform, Application: r.Application,
			ApplicationID: reactors.ProxyOf(r).ApplicationID, Configuration: r.Configuration, RequireAuth: r.RequireAuth,
			CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt, KeyHash: r.KeyHash}
	case *sessions.Record:
		g := func(g access.Grants) sessions.GrantsV0 {
			out := sessions.GrantsV0{Permissions: g.Permissions}
			if g.Rules != nil {
				out.Rules = recordfix.ApplicationV0(&access.ApplicationRecord{Rules: g.Rules}).Rules
			}
			return out
		}
		v = sessions.RecordV0{ID: r.ID, TenantID: r.TenantID, ApplicationID: r.ApplicationID, KeyHash: r.KeyHash,
			NonceHash: r.NonceHash, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, PendingAddress: r.PendingAddress,
			Authorized: r.Authorized, AuthorizedBy: r.AuthorizedBy, AuthorizedAt: r.AuthorizedAt,
			Grants: g(r.Grants), Ceiling: g(r.Ceiling)}
	case *idempotency.Record:
		x := idempotency.RecordV0{Version: r.Version, Fingerprint: r.Fingerprint, CreatedAt: r.CreatedAt,
			ExpiresAt: r.ExpiresAt, Claim: r.Claim, LeaseUntil: r.LeaseUntil, Grants: r.Grants}
		if r.Response != nil {
			x.Response = &struct {
				Status int                 `json:"status"`
				Header map[string][]string `json:"header,omitempty"`
				Body   []byte              `json:"body,omitempty"`
			}{r.Response.Status, r.Response.Header, r.Response.Body}
		}
		v = x
	default:
		t.Fatalf("no version 0 form for %T", rec)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// storedRecord is one record of a store walk: its key, raw value and
// decoded record.
type storedRecord struct {
	key barrier.Key
	raw []byte
	pt  []byte
	rec recordCodec
}

// walkRecords decodes every sealed or plain value of the store.
func walkRecords(t *testing.T, v *tokenvault.Vault, s store.Store) map[string]storedRecord {
	t.Helper()
	out := map[string]storedRecord{}
	var raws []storedRecord
	err := s.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, raw []byte) error {
			raws = append(raws, storedRecord{key: barrier.IndexEntry(string(k)), raw: append([]byte(nil), raw...)})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	err = testseam.Of(v).Work.View(context.Background(), func(tx *unit.Tx) error {
		for _, sr := range raws {
			family, tid := familyOf(sr.key.String())
			zero, ok := storedRecords[family]
			if !ok || len(sr.raw) == 0 {
				continue
			}
			if tid != "" {
				sr.key, _ = barrier.Tenant(tid).All().Found([]byte(sr.key.String()))
			}
			if storedFamilies[family] == plainMarker {
				sr.pt = sr.raw
			} else if sr.pt, err = tx.Open(sr.key, sr.raw); err != nil {
				if tid != "" && errors.Is(err, tokenvault.ErrNotFound) {
					continue // a tenant being deleted: its keyring is gone
				}
				return err
			}
			sr.rec = zero()
			if err := sr.rec.DecodeRecord(sr.key, sr.pt); err != nil {
				t.Errorf("%s: %v", sr.key, err)
			}
			out[sr.key.String()] = sr
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLegacyRecordKinds: a store whose every record is in the JSON the
// code before format version 1 wrote (every family of keys, written by
// the workload of TestStoreIsSealed, then rewritten as version 0) reads as
// it did: each record decodes to what it was, and the API answers the
// same; a write rewrites what it touches in version 1, and the re-seal
// pass every tenant record.
func TestLegacyRecordKinds(t *testing.T) {
	ctx := context.Background()
	mk := make([]byte, 32)
	rand.Read(mk)
	s := memory.New()
	var mu sync.Mutex
	clock := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Store: s, Now: now, Mailer: discardMailer{},
		Keys:      tokenvault.KeyOptions{MasterKey: mk},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
		Code:      tokenvault.CodeOptions{TrustedInProcess: true},
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	runSealedWorkload(t, ctx, v, now(), must)

	// A tenant of this test's own, whose answers are compared.
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Mine", Owner: tokenvault.User{Email: "me@example.com", LastName: "Me"}})
	must("CreateTenant", err)
	mgmt := boot.Application.Key
	priv, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "priv", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
	must("CreateApplication", err)
	pub, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "pub", Type: tokenvault.Public, Permissions: []string{tokenvault.PermTokenCreate}})
	must("CreateApplication public", err)
	authorized, err := v.CreateSession(ctx, pub.Key)
	must("CreateSession", err)
	must("AuthorizeSession", v.AuthorizeSession(ctx, priv.Key, tokenvault.AuthorizeSessionRequest{Nonce: authorized.Nonce,
		Permissions: []string{tokenvault.PermTokenCreate}}))
	waiting, err := v.CreateSession(ctx, pub.Key)
	must("CreateSession", err)
	_, err = v.CreateProxy(ctx, mgmt, tokenvault.ProxyRequest{Name: "px", DestinationURL: "https://example.com/in",
		Configuration: map[string]any{"a": 1, "b": []any{"x", true}}})
	must("CreateProxy", err)
	const code = `module.exports = async function (req) { return {raw: {}}; };`
	f, err := v.CreateFormula(ctx, mgmt, tokenvault.FormulaRequest{Name: "own", Code: code,
		Configuration:     []tokenvault.ConfigurationDeclaration{{Name: "K", Type: "string"}},
		RequestParameters: []tokenvault.RequestParameter{{Name: "n", Type: "number", Optional: true}}})
	must("CreateFormula", err)
	_, err = v.CreateReactor(ctx, mgmt, tokenvault.CreateReactorRequest{Name: "r", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{"K": "v"}})
	must("CreateReactor", err)
	_, err = v.CreateInvitation(ctx, mgmt, tokenvault.CreateInvitationRequest{Email: "ada@example.com"})
	must("CreateInvitation", err)
	idem := func() (*tokenvault.IdempotentResponse, bool, error) {
		return v.Idempotent(ctx, priv.Key, "k1", tokenvault.IdempotentRequest{Operation: "POST /tokens", Body: []byte(`{}`)},
			func(context.Context) (*tokenvault.IdempotentResponse, error) {
				return &tokenvault.IdempotentResponse{Status: 201, Header: map[string][]string{"X-A": {"1"}}, Body: []byte(`{"id":"y"}`)}, nil
			})
	}
	first, _, err := idem()
	must("Idempotent", err)

	answers := func() map[string]any {
		t.Helper()
		out := map[string]any{}
		var err error
		if out["tenant"], err = v.GetTenant(ctx, mgmt); err != nil {
			t.Fatal(err)
		}
		if out["tenants"], err = v.ListTenants(ctx, tokenvault.PageRequest{}); err != nil {
			t.Fatal(err)
		}
		if out["members"], err = v.ListMembers(ctx, mgmt, tokenvault.ListMembersRequest{}); err != nil {
			t.Fatal(err)
		}
		if out["proxies"], err = v.ListProxies(ctx, mgmt, tokenvault.ListProxiesRequest{}); err != nil {
			t.Fatal(err)
		}
		if out["formulas"], err = v.ListFormulas(ctx, mgmt, tokenvault.ListFormulasRequest{}); err != nil {
			t.Fatal(err)
		}
		if out["reactors"], err = v.ListReactors(ctx, mgmt, tokenvault.ListReactorsRequest{}); err != nil {
			t.Fatal(err)
		}
		if out["invitations"], err = v.ListInvitations(ctx, mgmt, tokenvault.ListInvitationsRequest{}); err != nil {
			t.Fatal(err)
		}
		if out["applications"], err = v.ListApplications(ctx, mgmt, tokenvault.ListApplicationsRequest{}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := answers()
	// Token intents have no version 0 (they came after the binary
	// records): they stay as they are.
	records := withoutIntents(walkRecords(t, v, s))

	// Write every record as the code before format version 1 did, and
	// void the auth cache, so that keys are read from these records.
	err = testseam.Of(v).Work.Update(ctx, func(tx *unit.Tx) error {
		for _, sr := range records {
			b := recordV0(t, sr.key, sr.rec)
			if family, _ := familyOf(sr.key.String()); storedFamilies[family] == plainMarker {
				if err := tx.PutPlain(sr.key, b); err != nil {
					return err
				}
				continue
			}
			if err := tx.Reseal(sr.key, b); err != nil {
				return err
			}
		}
		tx.MarkAuthChanged()
		return nil
	})
	must("downgrade", err)

	// Every record is in version 0 now, and decodes to what it was.
	old := withoutIntents(walkRecords(t, v, s))
	if len(old) != len(records) {
		t.Fatalf("%d records after the downgrade, %d before", len(old), len(records))
	}
	for k, sr := range old {
		if !unit.IsJSONV0(sr.pt) {
			t.Errorf("%s: not downgraded (%q...)", k, sr.pt[:1])
		}
		// A line's transform, channel, application and link came after
		// version 0, which no line holding them was ever written in.
		if diff := cmp.Diff(records[k].rec, sr.rec, cmpopts.EquateEmpty(),
			cmpopts.IgnoreFields(auditlog.LineRecord{}, "Line.Transform", "Line.Channel", "Line.Application", "Link")); diff != "" {
			t.Errorf("%s in version 0 decodes differently (-v1 +v0):\n%s", k, diff)
		}
	}
	if diff := cmp.Diff(before, answers()); diff != "" {
		t.Errorf("a store of version 0 answers differently (-v1 +v0):\n%s", diff)
	}
	// Keys authenticate through their lookups and records of version 0:
	// the authorized session creates a token, the waiting one is
	// authorized, the kept response is replayed.
	if _, err := v.CreateToken(ctx, authorized.SessionKey, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: "x"}); err != nil {
		t.Errorf("the authorized session on version 0 records: %v", err)
	}
	if err := v.AuthorizeSession(ctx, priv.Key, tokenvault.AuthorizeSessionRequest{Nonce: waiting.Nonce, Permissions: []string{tokenvault.PermTokenCreate}}); err != nil {
		t.Errorf("authorizing a session of version 0: %v", err)
	}
	if again, replayed, err := idem(); err != nil || !replayed || !cmp.Equal(first, again) {
		t.Errorf("idempotent replay from version 0: %+v, %v, %v; want %+v replayed", again, replayed, err, first)
	}

	// The re-seal pass writes every tenant record in version 1.
	must("RotateDataKey", v.RotateDataKey(ctx, mgmt))
	mu.Lock()
	clock = clock.Add(time.Hour)
	mu.Unlock()
	for {
		n, err := v.Reseal(ctx)
		must("Reseal", err)
		if n == 0 {
			break
		}
	}
	var sysV0 int
	for k, sr := range walkRecords(t, v, s) {
		_, tid := familyOf(k)
		switch {
		case tid != "" && unit.IsJSONV0(sr.pt):
			t.Errorf("%s: still in version 0 after the re-seal pass", k)
		case tid == "" && unit.IsJSONV0(sr.pt):
			sysV0++ // sys/ records stay as they are until written again
		}
	}
	t.Logf("sys/ records still in version 0 (read as they are): %d", sysV0)
	if diff := cmp.Diff(before, answers(), cmpopts.IgnoreFields(tokenvault.Tenant{}, "ModifiedAt", "ModifiedBy")); diff != "" {
		t.Errorf("after the re-seal pass (-before +after):\n%s", diff)
	}
}

// withoutIntents leaves out the token intents, webhooks, webhook
// deliveries, chain heads and links, checkpoints, audit signing keys, token list
// shapes and background leases of records, which have no version 0 form.
func withoutIntents(records map[string]storedRecord) map[string]storedRecord {
	for k, sr := range records {
		switch sr.rec.(type) {
		case *intents.Record, *events.Webhook, *events.Delivery, *auditlog.Head, *auditlog.Link, *auditlog.CheckpointRecord, *auditlog.KeyRecord, *tokens.ShapeRecord, *lease.Record:
			delete(records, k)
		}
	}
	return records
}
