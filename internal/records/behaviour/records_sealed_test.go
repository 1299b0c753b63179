package records_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
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
	"github.com/tokenvault/tokenvault/internal/reseal"
	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// valueForm is what a family of store keys holds.
type valueForm int

const (
	sealedBySystem valueForm = iota // opens with the system keyring, bound to its key
	sealedByTenant                  // opens with its tenant's keyring, bound to its key
	wrappedKeyring                  // a key wrapper's envelope (keywrap.go)
	emptyValue                      // an index or schedule entry: the key is the information
	plainMarker                     // a progress marker: store keys and times, nothing secret
)

// storedFamilies is every family of keys the Vault writes, and what each
// holds (keyspace.go describes them). A key of no family here fails
// TestStoreIsSealed: a new family, sealed or not, is added here, and one
// whose values are not sealed is a decision to write down in keyspace.go
// first. The unsealed ones are few, and listed on purpose.
var storedFamilies = map[string]valueForm{
	"sys/keyring":         wrappedKeyring,
	"sys/tenant/":         emptyValue,
	"sys/apikey/":         sealedBySystem,
	"sys/nonce/":          sealedBySystem,
	"sys/invite/":         sealedBySystem,
	"sys/proxy/":          sealedBySystem,
	"sys/formula/":        sealedBySystem,
	"sys/cvcscan":         sealedBySystem,
	"sys/lists-shapes":    sealedBySystem,
	"sys/lease/":          sealedBySystem,
	"sys/count/":          sealedBySystem,
	"sys/fingerprints":    sealedBySystem,
	"sys/expiry/":         emptyValue,
	"sys/cvc/":            emptyValue,
	"sys/auditq/":         emptyValue,
	"sys/whq/":            emptyValue,
	"sys/chainq/":         emptyValue,
	"sys/audit-key/":      sealedBySystem,
	"sys/chain-final/":    sealedBySystem,
	"sys/chain-unsigned/": emptyValue,
	"sys/reseal/":         plainMarker,
	"sys/deleting/":       plainMarker,

	"tenant/*/keyring":            wrappedKeyring,
	"tenant/*/idx/":               emptyValue,
	"tenant/*/tenant/":            sealedByTenant,
	"tenant/*/tenant_member/":     sealedByTenant,
	"tenant/*/tenant_invitation/": sealedByTenant,
	"tenant/*/application/":       sealedByTenant,
	"tenant/*/session/":           sealedByTenant,
	"tenant/*/token/":             sealedByTenant,
	"tenant/*/count/":             sealedByTenant,
	"tenant/*/log/":               sealedByTenant,
	"tenant/*/idempotency/":       sealedByTenant,
	"tenant/*/proxy/":             sealedByTenant,
	"tenant/*/reactor/":           sealedByTenant,
	"tenant/*/reactor_formula/":   sealedByTenant,
	"tenant/*/token_intent/":      sealedByTenant,
	"tenant/*/token_shape/":       sealedByTenant,
	"tenant/*/webhook/":           sealedByTenant,
	"tenant/*/webhook_delivery/":  sealedByTenant,
	"tenant/*/chain/":             sealedByTenant,
	"tenant/*/chain_checkpoint/":  sealedByTenant,
	"tenant/*/chain_link/":        sealedByTenant,
}

// familyOf names the family of store key k, and its tenant.
func familyOf(k string) (family, tid string) {
	if rest, ok := strings.CutPrefix(k, "tenant/"); ok {
		tid, rest, _ = strings.Cut(rest, "/")
		if rest == "keyring" {
			return "tenant/*/keyring", tid
		}
		kind, _, _ := strings.Cut(rest, "/")
		return "tenant/*/" + kind + "/", tid
	}
	if rest, ok := strings.CutPrefix(k, "sys/"); ok {
		if name, _, found := strings.Cut(rest, "/"); found {
			return "sys/" + name + "/", ""
		}
	}
	return k, ""
}

// failingSink refuses every delivery, so that the export queue keeps its
// entries for the walk.
type failingSink struct{}

func (failingSink) Name() string { return "walk" }
func (failingSink) Deliver(context.Context, []tokenvault.AuditEvent) error {
	return errors.New("not now")
}

type discardMailer struct{}

func (discardMailer) SendInvitation(context.Context, tokenvault.InvitationMail) error { return nil }

// TestStoreIsSealed runs a workload that writes every family of keys
// through the public API, then walks the whole store: every value under
// tenant/<tid>/ opens with that tenant's keyring, bound to its key; every
// sys/ value with the system keyring; keyrings are wrapped envelopes; and
// the only other values are the empty and plain ones storedFamilies lists.
func TestStoreIsSealed(t *testing.T) {
	ctx := context.Background()
	mk := make([]byte, 32)
	rand.Read(mk)
	s := memory.New()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Store:       s,
		Now:         func() time.Time { return now },
		Mailer:      discardMailer{},
		Logger:      slog.New(slog.NewTextHandler(t.Output(), nil)),
		Keys:        tokenvault.KeyOptions{MasterKey: mk},
		Retention:   tokenvault.RetentionOptions{SweepInterval: -1},
		Code:        tokenvault.CodeOptions{TrustedInProcess: true},
		AuditExport: tokenvault.AuditExportOptions{Sinks: []tokenvault.AuditSink{failingSink{}}, Backoff: time.Hour},
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
	walked := runSealedWorkload(t, ctx, v, now, must)

	// The whole store, holding a chain queue entry: the linker, on its
	// timer, may have linked the workload's away before the walk (a
	// loaded machine leaves any gap between two steps), so another is
	// queued and the store walked again until one is there.
	var stored map[string][]byte
	for attempt := 0; ; attempt++ {
		stored = map[string][]byte{}
		err = s.View(ctx, func(tx store.Tx) error {
			return tx.Scan(nil, nil, 0, func(k, raw []byte) error {
				stored[string(k)] = bytes.Clone(raw)
				return nil
			})
		})
		must("walk", err)
		queued := false
		for k := range stored {
			if family, _ := familyOf(k); family == "sys/chainq/" {
				queued = true
			}
		}
		if queued || attempt == 20 {
			break
		}
		must("chain queue entry", queueChainEntry(ctx, v, walked, now))
	}
	// The keyrings as stored, not as cached: what an attacker with the
	// master key and the store would have.
	rings := map[string]*seal.Keyring{}
	for k, raw := range stored {
		if family, tid := familyOf(k); storedFamilies[family] == wrappedKeyring {
			ks, err := testseam.Of(v).Work.Barrier().UnwrapKeys(ctx, k, raw)
			must("unwrap "+k, err)
			rings[tid] = ks.Ring()
		}
	}
	seen := map[string]int{}
	for k, raw := range stored {
		family, tid := familyOf(k)
		form, ok := storedFamilies[family]
		if !ok {
			t.Errorf("key %q: family %q is not one storedFamilies knows", k, family)
			continue
		}
		seen[family]++
		if err := checkValue(v, rings, k, tid, form, raw); err != nil {
			t.Errorf("key %q (%s): %v", k, family, err)
		}
	}
	t.Logf("keys walked, by family: %v", seen)
	var missing []string
	for f := range storedFamilies {
		if seen[f] == 0 {
			missing = append(missing, f)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the workload wrote no key of %v: extend it, so that the walk checks them", missing)
	}
}

// queueChainEntry leaves a chain queue entry (sys/chainq/,
// internal/auditlog/chain.go) in tenant tid, as a line a store took as an
// append and the linker has not linked yet does: on a store that does
// not append, only this way. The linker, on its timer, may link it away
// at any moment.
func queueChainEntry(ctx context.Context, v *tokenvault.Vault, tid string, now time.Time) error {
	return testseam.Of(v).Work.Update(ctx, func(t *unit.Tx) error {
		return t.PutIndex(barrier.Tenant(tid).ChainQueueEntry(barrier.TimeKey(now) + "/" + uuid.NewString()))
	})
}

// runSealedWorkload writes every family of keys through the public API
// (and the first step of a tenant deletion, which only the sweeper would
// otherwise leave half done), and returns the id of the tenant it walked.
func runSealedWorkload(t *testing.T, ctx context.Context, v *tokenvault.Vault, now time.Time, must func(string, error)) string {
	t.Helper()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Walked", Owner: tokenvault.User{Email: "o@example.com", FirstName: "O"}})
	must("CreateTenant", err)
	mgmt := boot.Application.Key
	later := now.Add(24 * time.Hour)
	app, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{
		Name: "tokens", Type: tokenvault.Private, ExpiresAt: &later,
		Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenUpdate},
	})
	must("CreateApplication", err)
	app, err = v.RegenerateApplicationKey(ctx, mgmt, app.ID)
	must("RegenerateApplicationKey", err)
	pub, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "pub", Type: tokenvault.Public, Permissions: []string{tokenvault.PermTokenCreate}})
	must("CreateApplication public", err)
	_, err = v.CreateSession(ctx, pub.Key)
	must("CreateSession", err)
	_, err = v.CreateTokenIntent(ctx, pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard,
		Data: map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2035, "cvc": "123"}})
	must("CreateTokenIntent", err)

	// A webhook whose deliveries stay queued: its private address is
	// refused at every attempt, before any dial.
	_, err = vaulttest.PutDeliveryWebhook(v, boot.Tenant.ID, vaulttest.DeliveryHook{Name: "walk", URL: "https://10.0.0.1/in",
		Secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ=", Events: []string{tokenvault.EventTokenCreated}})
	must("PutDeliveryWebhook", err)
	tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{
		Type: tokenvault.TypeToken, Data: map[string]any{"ssn": "123-45-6789"}, Metadata: map[string]string{"owner": "ada"},
		SearchIndexes: []string{"{{ data.ssn }}"}, DeduplicateToken: true, ExpiresAt: &later,
	})
	must("CreateToken", err)
	_, err = v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: tokenvault.TypeCard,
		Data: map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}})
	must("CreateToken card", err)
	_, err = v.GetToken(ctx, app.Key, tok.ID)
	must("GetToken", err)
	// A checkpoint (tenant/*/chain_checkpoint/), then a retired signing
	// key (sys/audit-key/); the lines after it leave the tenant's
	// unsigned mark (sys/chain-unsigned/).
	_, err = v.SignAuditChain(ctx, boot.Tenant.ID)
	must("SignAuditChain", err)
	_, err = v.RotateAuditKey(ctx)
	must("RotateAuditKey", err)

	_, err = v.CreateProxy(ctx, mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: "https://example.com/in"})
	must("CreateProxy", err)
	const code = `module.exports = async function (req) { return {raw: {}}; };`
	_, err = v.RegisterOfficialFormula(ctx, tokenvault.FormulaRequest{Name: "official", Code: code})
	must("RegisterOfficialFormula", err)
	f, err := v.CreateFormula(ctx, mgmt, tokenvault.FormulaRequest{Name: "own", Code: code})
	must("CreateFormula", err)
	_, err = v.CreateReactor(ctx, mgmt, tokenvault.CreateReactorRequest{Name: "r", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{}})
	must("CreateReactor", err)
	_, err = v.CreateInvitation(ctx, mgmt, tokenvault.CreateInvitationRequest{Email: "ada@example.com"})
	must("CreateInvitation", err)
	_, _, err = v.Idempotent(ctx, app.Key, "once", tokenvault.IdempotentRequest{Operation: "POST /tokens", Body: []byte(`{}`)},
		func(context.Context) (*tokenvault.IdempotentResponse, error) {
			return &tokenvault.IdempotentResponse{Status: 201, Body: []byte(`{"id":"x"}`)}, nil
		})
	must("Idempotent", err)
	// The sweeper's one scan for cards stored before cvc retention
	// records its progress (sys/cvcscan); nothing is due yet.
	_, err = v.Sweep(ctx)
	must("Sweep", err)
	must("RotateDataKey", v.RotateDataKey(ctx, mgmt)) // schedules a re-seal (sys/reseal/)
	// Last, so that no event of the workload is queued for it.
	_, err = v.CreateWebhook(ctx, mgmt, tokenvault.WebhookRequest{Name: "w", URL: "https://hooks.example.com/in", Events: []string{"*"}})
	must("CreateWebhook", err)
	// The linker, at once rather than on its timer (vaulttest.LinkNow): it takes its lease
	// (sys/lease/), links the lines, and leaves the unsigned mark of the
	// lines after the checkpoint (sys/chain-unsigned/).
	must("LinkNow", vaulttest.LinkNow(ctx, v))
	must("chain queue entry", queueChainEntry(ctx, v, boot.Tenant.ID, now))

	// A tenant halfway through its deletion: its keys are gone, its
	// marker (sys/deleting/) is not, nor its final checkpoint
	// (sys/chain-final/).
	doomed, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Doomed"})
	must("CreateTenant doomed", err)
	must("MarkDeleting", testseam.Of(v).MarkDeleting(ctx, doomed.Tenant.ID))
	_, err = testseam.Of(v).DeleteOnce(ctx, doomed.Tenant.ID)
	must("DeleteOnce", err)
	return boot.Tenant.ID
}

// checkValue checks that raw, stored at k (of tenant tid), has form.
// rings holds the keyrings by tenant id ("": the system's).
func checkValue(v *tokenvault.Vault, rings map[string]*seal.Keyring, k, tid string, form valueForm, raw []byte) error {
	switch form {
	case emptyValue:
		if len(raw) != 0 {
			return errors.New("an index or schedule entry holds a value")
		}
	case plainMarker:
		if err := checkStoredRecord(k, tid, raw); err != nil {
			return err
		}
	case wrappedKeyring:
		if _, err := testseam.Of(v).Work.Barrier().UnwrapKeys(context.Background(), k, raw); err != nil {
			return errors.New("a keyring does not unwrap bound to its key")
		}
		if _, err := testseam.Of(v).Work.Barrier().UnwrapKeys(context.Background(), k+"x", raw); err == nil {
			return errors.New("a keyring unwraps bound to another key")
		}
	case sealedBySystem, sealedByTenant:
		ring := rings[tid]
		if ring == nil {
			return errors.New("no keyring stored for its tenant")
		}
		pt, err := ring.Open([]byte(k), raw)
		if err != nil {
			return errors.New("does not open with its keyring")
		}
		if len(pt) == 0 {
			return errors.New("opens to nothing")
		}
		if bytes.Equal(pt, raw) {
			return errors.New("stored as it opens")
		}
		if _, err := ring.Open([]byte(k+"x"), raw); err == nil {
			return errors.New("opens bound to another key")
		}
		if err := checkStoredRecord(k, tid, pt); err != nil {
			return err
		}
	}
	return nil
}

// storedRecords is the record type each family of keys holding values
// (records_sealed_test.go's storedFamilies) is written in.
var storedRecords = map[string]func() recordCodec{
	"sys/apikey/":                 func() recordCodec { return &access.KeyRef{} },
	"sys/nonce/":                  func() recordCodec { return &access.KeyRef{} },
	"sys/invite/":                 func() recordCodec { return &access.KeyRef{} },
	"sys/proxy/":                  func() recordCodec { return &access.KeyRef{} },
	"sys/formula/":                func() recordCodec { return &reactors.FormulaRecord{} },
	"sys/cvcscan":                 func() recordCodec { return &tokens.LegacyCVCScan{} },
	"sys/lists-shapes":            func() recordCodec { return &tokens.ListBuild{} },
	"sys/lease/":                  func() recordCodec { return &lease.Record{} },
	"sys/count/":                  func() recordCodec { return &counts.Record{} },
	"sys/fingerprints":            func() recordCodec { return &tokens.FingerprintPlace{} },
	"sys/reseal/":                 func() recordCodec { return &reseal.State{} },
	"sys/deleting/":               func() recordCodec { return &tenants.DeletionState{} },
	"tenant/*/tenant/":            func() recordCodec { return &tenants.Record{} },
	"tenant/*/tenant_member/":     func() recordCodec { return &tenants.MemberRecord{} },
	"tenant/*/tenant_invitation/": func() recordCodec { return &tenants.InvitationRecord{} },
	"tenant/*/application/":       func() recordCodec { return &access.ApplicationRecord{} },
	"tenant/*/session/":           func() recordCodec { return &sessions.Record{} },
	"tenant/*/token/":             func() recordCodec { return &tokens.Record{} },
	"tenant/*/count/":             func() recordCodec { return &counts.Record{} },
	"tenant/*/log/":               func() recordCodec { return &auditlog.LineRecord{} },
	"tenant/*/idempotency/":       func() recordCodec { return &idempotency.Record{} },
	"tenant/*/proxy/":             func() recordCodec { return &reactors.ProxyRecord{} },
	"tenant/*/reactor/":           func() recordCodec { return &reactors.Record{} },
	"tenant/*/reactor_formula/":   func() recordCodec { return &reactors.FormulaRecord{} },
	"tenant/*/token_intent/":      func() recordCodec { return &intents.Record{} },
	"tenant/*/token_shape/":       func() recordCodec { return &tokens.ShapeRecord{} },
	"tenant/*/webhook/":           func() recordCodec { return &events.Webhook{} },
	"tenant/*/webhook_delivery/":  func() recordCodec { return &events.Delivery{} },
	"tenant/*/chain/":             func() recordCodec { return &auditlog.Head{} },
	"tenant/*/chain_checkpoint/":  func() recordCodec { return &auditlog.CheckpointRecord{} },
	"tenant/*/chain_link/":        func() recordCodec { return &auditlog.Link{} },
	"sys/chain-final/":            func() recordCodec { return &auditlog.CheckpointRecord{} },
	"sys/audit-key/":              func() recordCodec { return &auditlog.KeyRecord{} },
}

// checkStoredRecord holds pt, the plaintext of the value at store key k of
// tenant tid, to its family's record: the Vault writes every one in format
// version 1 (no JSON of version 0), and it decodes.
func checkStoredRecord(k, tid string, pt []byte) error {
	family, _ := familyOf(k)
	zero, ok := storedRecords[family]
	if !ok {
		return fmt.Errorf("family %s holds values but has no record type in storedRecords", family)
	}
	if len(pt) == 0 || pt[0] != 1 {
		return fmt.Errorf("not a record of format version 1: starts with %q", pt[:min(len(pt), 1)])
	}
	key := barrier.IndexEntry(k)
	if tid != "" {
		key, _ = barrier.Tenant(tid).All().Found([]byte(k))
	}
	if err := zero().DecodeRecord(key, pt); err != nil {
		return fmt.Errorf("does not decode as %T: %v", zero(), err)
	}
	return nil
}

// TestStoredRecordsCoverFamilies: every family of keys that holds a
// sealed or plain value has its record type.
func TestStoredRecordsCoverFamilies(t *testing.T) {
	for family, form := range storedFamilies {
		_, ok := storedRecords[family]
		if holds := form == sealedBySystem || form == sealedByTenant || form == plainMarker; holds != ok {
			t.Errorf("family %s: holds values %v, has a record type %v", family, holds, ok)
		}
	}
}
