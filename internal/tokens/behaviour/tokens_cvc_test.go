package tokens_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
	"github.com/tokenvault/tokenvault/store/storetest"
)

// storedCVC reports whether the stored record of a token (opened, with
// nothing hidden) still holds a cvc, and whether it still has a removal
// scheduled.
func storedCVC(t *testing.T, e *vaulttest.Env, id string) (cvc, scheduled bool) {
	t.Helper()
	data, idx, err := vaulttest.StoredToken(ctx, e.V, e.Boot.Tenant.ID, id)
	if err != nil {
		t.Fatalf("StoredToken: %v", err)
	}
	for _, k := range idx {
		scheduled = scheduled || strings.HasPrefix(k, "sys/cvc/")
	}
	var d map[string]any
	json.Unmarshal(data, &d)
	_, cvc = d["cvc"]
	return cvc, scheduled
}

// TestCVCRetention: a card's cvc is readable for Options.Retention.CVC
// (default one hour) after it was written, absent from every read path at
// once when the window ends, and removed from the stored record by the
// sweeper.
func TestCVCRetention(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		key := e.Reader(t, "reveal", "token:create", "token:read", "token:search", "token:update").Key
		tok, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "card", Metadata: map[string]string{"k": "v"},
			Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}})
		if err != nil {
			t.Fatal(err)
		}
		reads := func() map[string]string {
			out := map[string]string{}
			got, err := e.V.GetToken(ctx, key, tok.ID)
			if err != nil {
				t.Fatal(err)
			}
			out["get"] = vaulttest.CVCOf(got)
			list, err := e.V.ListTokens(ctx, key, tokenvault.ListTokensRequest{IDs: []string{tok.ID}})
			if err != nil || len(list.Data) != 1 {
				t.Fatalf("ListTokens = %v, %v", list, err)
			}
			out["list"] = vaulttest.CVCOf(&list.Data[0])
			all, err := e.V.ListTokens(ctx, key, tokenvault.ListTokensRequest{}) // the scan path
			if err != nil || len(all.Data) != 1 {
				t.Fatalf("ListTokens(all) = %v, %v", all, err)
			}
			out["list all"] = vaulttest.CVCOf(&all.Data[0])
			found, err := e.V.SearchTokens(ctx, key, tokenvault.SearchTokensRequest{Query: "metadata.k:v"})
			if err != nil || len(found.Data) != 1 {
				t.Fatalf("SearchTokens = %v, %v", found, err)
			}
			out["search"] = vaulttest.CVCOf(&found.Data[0])
			detok, err := e.V.Detokenize(ctx, key, map[string]any{"c": "{{ " + tok.ID + " }}"})
			if err != nil {
				t.Fatal(err)
			}
			c, _ := detok.(map[string]any)["c"].(map[string]any)["cvc"].(string)
			out["detokenize"] = c
			return out
		}
		all := func(cvc string) map[string]string {
			return map[string]string{"get": cvc, "list": cvc, "list all": cvc, "search": cvc, "detokenize": cvc}
		}
		if diff := cmp.Diff(all("123"), reads()); diff != "" {
			t.Errorf("reads at creation (-want +got):\n%s", diff)
		}
		e.Clock.Advance(time.Hour - time.Nanosecond)
		if diff := cmp.Diff(all("123"), reads()); diff != "" {
			t.Errorf("reads just before the window ends (-want +got):\n%s", diff)
		}
		e.Clock.Advance(time.Nanosecond)
		if diff := cmp.Diff(all(""), reads()); diff != "" {
			t.Errorf("reads when the window ends, before the sweep (-want +got):\n%s", diff)
		}
		if cvc, scheduled := storedCVC(t, e, tok.ID); !cvc || !scheduled {
			t.Fatalf("before the sweep the stored record has cvc %v, scheduled %v; want both", cvc, scheduled)
		}
		n, err := e.V.Sweep(ctx)
		if err != nil || n != 1 {
			t.Fatalf("Sweep = %d, %v; want 1 cvc removed", n, err)
		}
		if cvc, scheduled := storedCVC(t, e, tok.ID); cvc || scheduled {
			t.Errorf("after the sweep the stored record has cvc %v, scheduled %v; want neither", cvc, scheduled)
		}
		if diff := cmp.Diff(all(""), reads()); diff != "" {
			t.Errorf("reads after the sweep (-want +got):\n%s", diff)
		}
		for k := range vaulttest.Dump(t, e.Store) {
			if strings.HasPrefix(k, "sys/cvc/") {
				t.Errorf("schedule entry %s left after the sweep", k)
			}
		}
		got, _ := e.V.GetToken(ctx, key, tok.ID)
		if d := got.Data.(map[string]any); d["number"] != vaulttest.Visa || got.Metadata["k"] != "v" {
			t.Errorf("the sweep changed more than the cvc: %+v", got)
		}
		if n, err := e.V.Sweep(ctx); err != nil || n != 0 {
			t.Errorf("second Sweep = %d, %v; want nothing to do", n, err)
		}
	})
}

// TestCVCRetentionAcrossPatches: a patch that sends a cvc starts a new
// window; a patch that does not keeps the old one; a patch after the window
// cannot bring an old cvc back.
func TestCVCRetentionAcrossPatches(t *testing.T) {
	e := vaulttest.NewEnv(t)
	key := e.Reader(t, "reveal", "token:create", "token:read", "token:update").Key
	get := func(id string) string {
		t.Helper()
		got, err := e.V.GetToken(ctx, key, id)
		if err != nil {
			t.Fatal(err)
		}
		return vaulttest.CVCOf(got)
	}
	kept := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))    // cvc 123
	renewed := e.Token(t, vaulttest.CardRequest(vaulttest.Visa)) // cvc 123
	late := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))    // cvc 123
	e.Clock.Advance(50 * time.Minute)
	if _, err := e.V.UpdateToken(ctx, key, kept.ID, json.RawMessage(`{"metadata": {"a": "b"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.UpdateToken(ctx, key, renewed.ID, json.RawMessage(`{"data": {"cvc": "456"}}`)); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(10 * time.Minute)
	if got := get(kept.ID); got != "" {
		t.Errorf("a metadata patch restarted the window: cvc %q an hour after tokenizing", got)
	}
	if got := get(renewed.ID); got != "456" {
		t.Errorf("cvc %q 10 minutes after a patch sent 456", got)
	}
	if _, err := e.V.UpdateToken(ctx, key, late.ID, json.RawMessage(`{"metadata": {"a": "b"}}`)); err != nil {
		t.Fatal(err)
	}
	if got := get(late.ID); got != "" {
		t.Errorf("a patch after the window brought back cvc %q", got)
	}
	if cvc, scheduled := storedCVC(t, e, late.ID); cvc || scheduled {
		t.Errorf("a patch after the window stored cvc %v, scheduled %v", cvc, scheduled)
	}
	if n, err := e.V.Sweep(ctx); err != nil || n != 1 {
		t.Errorf("Sweep = %d, %v; want 1 (kept's cvc)", n, err)
	}
	e.Clock.Advance(50 * time.Minute)
	if got := get(renewed.ID); got != "" {
		t.Errorf("cvc %q an hour after the patch that sent it", got)
	}
	if n, err := e.V.Sweep(ctx); err != nil || n != 1 {
		t.Errorf("Sweep = %d, %v; want 1 (renewed's cvc)", n, err)
	}
}

// TestCardExpressionsIgnoreTheCVC: masks, fingerprints and search indexes
// of a card are computed without its cvc, so nothing derived from it
// outlives its window.
func TestCardExpressionsIgnoreTheCVC(t *testing.T) {
	e := vaulttest.NewEnv(t)
	key := e.Reader(t, "reveal", "token:create", "token:read").Key
	card := func(cvc string) tokenvault.TokenRequest {
		return tokenvault.TokenRequest{Type: "card", FingerprintExpression: "{{ data | stringify }}",
			// The JSON of the data up to the number's first digits: a
			// cvc would come first ("cvc" sorts before the others), and
			// a mask may show no more of the number than its BIN.
			Mask: map[string]any{"all": "{{ data | stringify | slice: 0, 60 }}", "cvc": "{{ data.cvc }}"},
			Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031, "cvc": cvc}}
	}
	a, err := e.V.CreateToken(ctx, key, card("123"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.V.CreateToken(ctx, key, card("987"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint == "" || a.Fingerprint != b.Fingerprint {
		t.Errorf("fingerprints %q and %q differ by the cvc", a.Fingerprint, b.Fingerprint)
	}
	if m := vaulttest.MustJSON(a.Mask); strings.Contains(m, "123") || strings.Contains(m, "cvc\":\"") {
		t.Errorf("mask %s shows the cvc", m)
	}
	_, err = e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: "card", SearchIndexes: []string{"{{ data.cvc }}"},
		Data: map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}})
	vaulttest.WantField(t, err, "search_indexes[0]")
}

// TestCVCRetentionOption: Options.Retention.CVC sets the window; negative
// is refused by Open.
func TestCVCRetentionOption(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Retention.CVC = 10 * time.Minute })
	key := e.Reader(t, "reveal", "token:create", "token:read").Key
	tok := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	e.Clock.Advance(9 * time.Minute)
	if got, _ := e.V.GetToken(ctx, key, tok.ID); vaulttest.CVCOf(got) != "123" {
		t.Errorf("cvc gone after 9 of 10 minutes")
	}
	e.Clock.Advance(time.Minute)
	if got, _ := e.V.GetToken(ctx, key, tok.ID); vaulttest.CVCOf(got) != "" {
		t.Errorf("cvc still there after 10 of 10 minutes")
	}
	_, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: vaulttest.NewMasterKey()}, Retention: tokenvault.RetentionOptions{SweepInterval: -1, CVC: -time.Second}})
	if err == nil {
		t.Errorf("Open(CVCRetention -1s) = nil error")
	}
}

// batchStore records the most token records written by one transaction.
type batchStore struct {
	store.Store
	mu  sync.Mutex
	max int
}

type batchTx struct {
	store.Tx
	n *int
}

func (b *batchTx) Put(k, v []byte) error {
	if strings.Contains(string(k), "/token/") {
		*b.n++
	}
	return b.Tx.Put(k, v)
}

func (s *batchStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	n := 0
	err := s.Store.Update(ctx, func(tx store.Tx) error { n = 0; return fn(&batchTx{tx, &n}) })
	s.mu.Lock()
	s.max = max(s.max, n)
	s.mu.Unlock()
	return err
}

// TestCVCSweepIsTransactionalAndBatched: a sweep removing cvcs fails
// whole (a failed write leaves the store as it was) and writes at most 100
// cards per transaction.
func TestCVCSweepIsTransactionalAndBatched(t *testing.T) {
	fs := storetest.NewFaultStore(memory.New())
	e := vaulttest.NewEnvOn(t, fs)
	key := e.Reader(t, "reveal", "token:create", "token:read").Key
	var ids []string
	for range 3 {
		ids = append(ids, e.Token(t, vaulttest.CardRequest(vaulttest.Visa)).ID)
	}
	// The first sweep of a store also runs, in transactions of its own,
	// the one scan for cards stored before cvc retention existed.
	if n, err := e.V.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("Sweep within the window = %d, %v", n, err)
	}
	e.Clock.Advance(time.Hour)
	for n := 0; ; n++ {
		e.SettleChain(t)
		before := vaulttest.Dump(t, fs)
		fs.FailAfter(n)
		_, err := e.V.Sweep(ctx)
		fs.FailAfter(-1)
		if err == nil {
			if n == 0 {
				t.Fatal("Sweep succeeded with its first write failing")
			}
			break
		}
		if diff := cmp.Diff(before, vaulttest.Dump(t, fs)); diff != "" {
			t.Fatalf("Sweep with write %d failing changed the store:\n%s", n, diff)
		}
		if n > 50 {
			t.Fatal("Sweep never succeeded")
		}
	}
	for _, id := range ids {
		if cvc, scheduled := storedCVC(t, e, id); cvc || scheduled {
			t.Errorf("token %s after the sweep: cvc %v, scheduled %v", id, cvc, scheduled)
		}
		if got, _ := e.V.GetToken(ctx, key, id); vaulttest.CVCOf(got) != "" {
			t.Errorf("token %s still shows its cvc", id)
		}
	}

	bs := &batchStore{Store: memory.New()}
	e = vaulttest.NewEnvOn(t, bs)
	creator := e.Reader(t, "mask", "token:create").Key
	var body []any
	for range 150 {
		body = append(body, map[string]any{"type": "card", "data": map[string]any{"number": vaulttest.Visa, "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}})
	}
	if _, err := e.V.Tokenize(ctx, creator, body); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	bs.mu.Lock()
	bs.max = 0
	bs.mu.Unlock()
	if n, err := e.V.Sweep(ctx); err != nil || n != 150 {
		t.Fatalf("Sweep = %d, %v; want 150", n, err)
	}
	bs.mu.Lock() // the linker's transactions run beside: read under the lock
	most := bs.max
	bs.mu.Unlock()
	if most > 100 || most == 0 {
		t.Errorf("a sweep transaction wrote %d cards, want 1 to 100", most)
	}
}

// TestCVCRetentionInTenantCode: reactor arguments detokenized with
// token:use, and req.client reads, leave out a cvc past its window.
func TestCVCRetentionInTenantCode(t *testing.T) {
	e := vaulttest.NewEnv(t)
	tok := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	reader := e.Reader(t, "reveal", "token:read")
	code := `module.exports = async function (req) {
		return {raw: {args: req.args, client: req.client.getToken("` + tok.ID + `").data,
			detok: req.client.detokenize({c: "{{ ` + tok.ID + ` }}"})}};
	};`
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: code, Configuration: map[string]any{},
		Application: &tokenvault.Ref{ID: reader.ID}})
	invoke := func() string {
		t.Helper()
		out, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{
			Args: map[string]any{"card": "{{ " + tok.ID + " }}"}})
		if err != nil {
			t.Fatalf("InvokeReactor: %v", err)
		}
		return vaulttest.MustJSON(out)
	}
	if got := invoke(); strings.Count(got, `"cvc":"123"`) != 3 {
		t.Errorf("within the window, reactor answer %s; want the cvc 3 times", got)
	}
	e.Clock.Advance(time.Hour)
	if got := invoke(); strings.Contains(got, "cvc") || !strings.Contains(got, vaulttest.Visa) {
		t.Errorf("after the window, reactor answer %s; want the card without its cvc", got)
	}
}

// TestCVCRetentionOfCardsStoredBefore: cards stored before cvc retention
// existed (a cvc, no write time) count from their last write, are never
// read past the window, and are found by the sweeper's one scan of every
// tenant's tokens (in batches), which removes or schedules their cvc.
func TestCVCRetentionOfCardsStoredBefore(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		key := e.Reader(t, "reveal", "token:create", "token:read").Key
		var plain []any
		for range 130 {
			plain = append(plain, "x")
		}
		if _, err := e.V.Tokenize(ctx, key, plain); err != nil {
			t.Fatal(err)
		}
		early := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
		e.Clock.Advance(30 * time.Minute)
		late := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
		other := e.Tenant(t, "Other")
		oc, err := e.V.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{Name: "c", Type: "private",
			Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read"}}}})
		if err != nil {
			t.Fatal(err)
		}
		otherCard, err := e.V.CreateToken(ctx, oc.Key, vaulttest.CardRequest(vaulttest.Visa))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ tid, id string }{{e.Boot.Tenant.ID, early.ID}, {e.Boot.Tenant.ID, late.ID}, {other.Tenant.ID, otherCard.ID}} {
			if err := vaulttest.ForgetCVCTime(ctx, e.V, c.tid, c.id); err != nil {
				t.Fatal(err)
			}
		}
		get := func(k tokenvault.Credential, id string) string {
			t.Helper()
			got, err := e.V.GetToken(ctx, k, id)
			if err != nil {
				t.Fatal(err)
			}
			return vaulttest.CVCOf(got)
		}
		if get(key, early.ID) != "123" || get(key, late.ID) != "123" {
			t.Fatal("legacy cards lost their cvc within the window")
		}
		e.Clock.Advance(30 * time.Minute) // early is due, late and otherCard are not
		if got := get(key, early.ID); got != "" {
			t.Errorf("legacy card read past its window: cvc %q", got)
		}
		n, err := e.V.Sweep(ctx)
		if err != nil || n != 1 {
			t.Fatalf("first Sweep = %d, %v; want 1 (early's cvc)", n, err)
		}
		if cvc, _ := storedCVC(t, e, early.ID); cvc {
			t.Errorf("the legacy scan left early's cvc stored")
		}
		if cvc, scheduled := storedCVC(t, e, late.ID); !cvc || !scheduled {
			t.Errorf("late after the scan: cvc %v, scheduled %v; want both", cvc, scheduled)
		}
		e.Clock.Advance(30 * time.Minute)
		if get(key, late.ID) != "" || get(oc.Key, otherCard.ID) != "" {
			t.Errorf("legacy cards read past their window")
		}
		if n, err := e.V.Sweep(ctx); err != nil || n != 2 {
			t.Fatalf("second Sweep = %d, %v; want 2 (late's and the other tenant's)", n, err)
		}
		if cvc, scheduled := storedCVC(t, e, late.ID); cvc || scheduled {
			t.Errorf("late after the sweep: cvc %v, scheduled %v", cvc, scheduled)
		}
	})
}

// TestCVCRetentionInProxies: a proxy's detokenized body leaves out a cvc
// past its window.
func TestCVCRetentionInProxies(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL})
	user := e.User(t)
	sent := func() string {
		t.Helper()
		if _, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, user, "/pay", `{"card": "{{`+card.ID+`}}"}`)); err != nil {
			t.Fatalf("InvokeProxy: %v", err)
		}
		d.Mu.Lock()
		defer d.Mu.Unlock()
		return d.Body
	}
	if got := sent(); !strings.Contains(got, `"cvc":"123"`) {
		t.Errorf("within the window the destination got %s; want the cvc", got)
	}
	e.Clock.Advance(time.Hour)
	if got := sent(); strings.Contains(got, "cvc") || !strings.Contains(got, vaulttest.Visa) {
		t.Errorf("after the window the destination got %s; want the card without its cvc", got)
	}
}
