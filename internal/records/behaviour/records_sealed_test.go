package tokenvault

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/seal"
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
func (failingSink) Deliver(context.Context, []AuditEvent) error {
	return errors.New("not now")
}

type discardMailer struct{}

func (discardMailer) SendInvitation(context.Context, InvitationMail) error { return nil }

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
	v, err := Open(ctx, Options{
		Store:       s,
		Now:         func() time.Time { return now },
		Mailer:      discardMailer{},
		Logger:      slog.New(slog.NewTextHandler(t.Output(), nil)),
		Keys:        KeyOptions{MasterKey: mk},
		Retention:   RetentionOptions{SweepInterval: -1},
		Code:        CodeOptions{TrustedInProcess: true},
		AuditExport: AuditExportOptions{Sinks: []AuditSink{failingSink{}}, Backoff: time.Hour},
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
	runSealedWorkload(t, ctx, v, now, must)

	stored := map[string][]byte{}
	err = s.View(ctx, func(tx store.Tx) error {
		return tx.Scan(nil, nil, 0, func(k, raw []byte) error {
			stored[string(k)] = bytes.Clone(raw)
			return nil
		})
	})
	must("walk", err)
	// The keyrings as stored, not as cached: what an attacker with the
	// master key and the store would have.
	rings := map[string]*seal.Keyring{}
	for k, raw := range stored {
		if family, tid := familyOf(k); storedFamilies[family] == wrappedKeyring {
			ks, err := v.barrier.UnwrapKeys(ctx, k, raw)
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

// runSealedWorkload writes every family of keys through the public API
// (and the first step of a tenant deletion, which only the sweeper would
// otherwise leave half done).
func runSealedWorkload(t *testing.T, ctx context.Context, v *Vault, now time.Time, must func(string, error)) {
	t.Helper()
	boot, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Walked", Owner: User{Email: "o@example.com", FirstName: "O"}})
	must("CreateTenant", err)
	mgmt := boot.Application.Key
	later := now.Add(24 * time.Hour)
	app, err := v.CreateApplication(ctx, mgmt, CreateApplicationRequest{
		Name: "tokens", Type: Private, ExpiresAt: &later,
		Permissions: []string{PermTokenCreate, PermTokenRead, PermTokenUpdate},
	})
	must("CreateApplication", err)
	app, err = v.RegenerateApplicationKey(ctx, mgmt, app.ID)
	must("RegenerateApplicationKey", err)
	pub, err := v.CreateApplication(ctx, mgmt, CreateApplicationRequest{Name: "pub", Type: Public, Permissions: []string{PermTokenCreate}})
	must("CreateApplication public", err)
	_, err = v.CreateSession(ctx, pub.Key)
	must("CreateSession", err)
	_, err = v.CreateTokenIntent(ctx, pub.Key, TokenIntentRequest{Type: TypeCard,
		Data: map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2035, "cvc": "123"}})
	must("CreateTokenIntent", err)

	// A webhook whose deliveries stay queued: its private address is
	// refused at every attempt, before any dial.
	_, err = PutDeliveryWebhook(v, boot.Tenant.ID, HookForTest{Name: "walk", URL: "https://10.0.0.1/in",
		Secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ=", Events: []string{EventTokenCreated}})
	must("PutDeliveryWebhook", err)
	tok, err := v.CreateToken(ctx, app.Key, TokenRequest{
		Type: TypeToken, Data: map[string]any{"ssn": "123-45-6789"}, Metadata: map[string]string{"owner": "ada"},
		SearchIndexes: []string{"{{ data.ssn }}"}, DeduplicateToken: true, ExpiresAt: &later,
	})
	must("CreateToken", err)
	_, err = v.CreateToken(ctx, app.Key, TokenRequest{Type: TypeCard,
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

	_, err = v.CreateProxy(ctx, mgmt, ProxyRequest{Name: "p", DestinationURL: "https://example.com/in"})
	must("CreateProxy", err)
	const code = `module.exports = async function (req) { return {raw: {}}; };`
	_, err = v.RegisterOfficialFormula(ctx, FormulaRequest{Name: "official", Code: code})
	must("RegisterOfficialFormula", err)
	f, err := v.CreateFormula(ctx, mgmt, FormulaRequest{Name: "own", Code: code})
	must("CreateFormula", err)
	_, err = v.CreateReactor(ctx, mgmt, CreateReactorRequest{Name: "r", Formula: &Ref{ID: f.ID}, Configuration: map[string]any{}})
	must("CreateReactor", err)
	_, err = v.CreateInvitation(ctx, mgmt, CreateInvitationRequest{Email: "ada@example.com"})
	must("CreateInvitation", err)
	_, _, err = v.Idempotent(ctx, app.Key, "once", IdempotentRequest{Operation: "POST /tokens", Body: []byte(`{}`)},
		func(context.Context) (*IdempotentResponse, error) {
			return &IdempotentResponse{Status: 201, Body: []byte(`{"id":"x"}`)}, nil
		})
	must("Idempotent", err)
	// The sweeper's one scan for cards stored before cvc retention
	// records its progress (sys/cvcscan); nothing is due yet.
	_, err = v.Sweep(ctx)
	must("Sweep", err)
	must("RotateDataKey", v.RotateDataKey(ctx, mgmt)) // schedules a re-seal (sys/reseal/)
	// Last, so that no event of the workload is queued for it.
	_, err = v.CreateWebhook(ctx, mgmt, WebhookRequest{Name: "w", URL: "https://hooks.example.com/in", Events: []string{"*"}})
	must("CreateWebhook", err)
	// The linker, at once rather than on its timer: it takes its lease
	// (sys/lease/), links the lines, and leaves the unsigned mark of the
	// lines after the checkpoint (sys/chain-unsigned/).
	must("linkNow", v.linkNow(ctx))
	// A line a store took as an append and the linker has not linked
	// yet leaves its chain queue entry (sys/chainq/, internal/auditlog/chain.go): on this
	// store, which does not append, only this way.
	must("chain queue entry", v.update(ctx, func(t *txn) error {
		return t.PutIndex(barrier.Tenant(boot.Tenant.ID).ChainQueueEntry(barrier.TimeKey(now) + "/" + uuid.NewString()))
	}))

	// A tenant halfway through its deletion: its keys are gone, its
	// marker (sys/deleting/) is not, nor its final checkpoint
	// (sys/chain-final/).
	doomed, err := v.CreateTenant(ctx, CreateTenantRequest{Name: "Doomed"})
	must("CreateTenant doomed", err)
	must("markDeleting", v.markDeleting(ctx, doomed.Tenant.ID))
	_, err = v.deleteOnce(ctx, doomed.Tenant.ID)
	must("deleteOnce", err)
}

// checkValue checks that raw, stored at k (of tenant tid), has form.
// rings holds the keyrings by tenant id ("": the system's).
func checkValue(v *Vault, rings map[string]*seal.Keyring, k, tid string, form valueForm, raw []byte) error {
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
		if _, err := v.barrier.UnwrapKeys(context.Background(), k, raw); err != nil {
			return errors.New("a keyring does not unwrap bound to its key")
		}
		if _, err := v.barrier.UnwrapKeys(context.Background(), k+"x", raw); err == nil {
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

// TestBarrierKindsAreEntities: the record kinds the barrier's key space
// treats apart (internal/barrier: which authenticate, which are counted)
// are the Vault's entity names.
func TestBarrierKindsAreEntities(t *testing.T) {
	for _, c := range []struct{ barrier, entity string }{
		{barrier.KindApplication, EntityApplication},
		{barrier.KindSession, EntitySession},
		{barrier.KindReactor, EntityReactor},
		{barrier.KindProxy, EntityProxy},
		{barrier.KindTenantMember, EntityTenantMember},
		{barrier.KindTenantInvitation, EntityTenantInvitation},
		{barrier.KindTokenIntent, EntityTokenIntent},
		{barrier.KindWebhook, EntityWebhook},
	} {
		if c.barrier != c.entity {
			t.Errorf("barrier kind %q, entity %q", c.barrier, c.entity)
		}
	}
}
