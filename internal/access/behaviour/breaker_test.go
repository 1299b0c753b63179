package access_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// breakerEnv is a Vault with n plain tokens (data "secret-<i>"), a
// webhook on access.anomaly whose events the returned tap collects, and
// a reader revealing every token under budget.
func breakerEnv(t *testing.T, e *vaulttest.Env, n int, budget tokenvault.RevealBudget) (*vaulttest.EventTap, []*tokenvault.Token, *tokenvault.Application) {
	t.Helper()
	tap := vaulttest.TapEvents(e.V)
	if _, _, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID, []string{tokenvault.EventAccessAnomaly}, true); err != nil {
		t.Fatal(err)
	}
	var toks []*tokenvault.Token
	for i := range n {
		toks = append(toks, e.Token(t, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprintf("secret-%d", i)}))
	}
	reader, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "bulk reader", Type: tokenvault.Private,
		Rules:        []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal, Permissions: []string{tokenvault.PermTokenRead, tokenvault.PermTokenUse}}},
		RevealBudget: &budget,
	})
	if err != nil {
		t.Fatalf("CreateApplication(reveal_budget %+v): %v", budget, err)
	}
	return tap, toks, reader
}

// anomalies counts the access.anomaly events tapped.
func anomalies(tap *vaulttest.EventTap) int {
	n := 0
	for _, ev := range tap.Events() {
		if ev.Info.Type == tokenvault.EventAccessAnomaly {
			n++
		}
	}
	return n
}

// TestRevealBudgetTripsAtTheBudget: a key reveals as many distinct tokens
// per window as its budget says, rereads those freely, is shown the
// others masked past it, and access.anomaly fires once, when the budget
// is crossed, not before; a new window reveals again.
func TestRevealBudgetTripsAtTheBudget(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tap, toks, reader := breakerEnv(t, e, 5, tokenvault.RevealBudget{Tokens: 3, Window: "1h"})
		got, err := e.V.GetApplication(ctx, e.Mgmt, reader.ID)
		if err != nil || got.RevealBudget == nil || got.RevealBudget.Action != tokenvault.BudgetMask || got.RevealBudget.Window != "1h0m0s" {
			t.Fatalf("GetApplication = %+v, %v; want the budget, action mask by default", got.RevealBudget, err)
		}
		read := func(i int) any {
			t.Helper()
			tok, err := e.V.GetToken(ctx, reader.Key, toks[i].ID)
			if err != nil {
				t.Fatalf("GetToken(%d): %v", i, err)
			}
			return tok.Data
		}
		for _, i := range []int{0, 1, 2, 0, 2} {
			if d := read(i); d != fmt.Sprintf("secret-%d", i) {
				t.Fatalf("within the budget, token %d = %v, want it revealed", i, d)
			}
		}
		if n := anomalies(tap); n != 0 {
			t.Fatalf("%d anomalies within the budget, want 0", n)
		}
		for _, i := range []int{3, 4, 3} {
			if d := read(i); d == fmt.Sprintf("secret-%d", i) {
				t.Fatalf("past the budget, token %d was revealed", i)
			}
		}
		if n := anomalies(tap); n != 1 {
			t.Fatalf("%d anomalies past the budget, want 1 (once per crossing)", n)
		}
		// A bulk read: a detokenization of all five reveals the three
		// counted and masks the rest.
		out, err := e.V.Detokenize(ctx, reader.Key, map[string]any{
			"a": "{{" + toks[0].ID + "}}", "d": "{{" + toks[3].ID + "}}"})
		if err != nil {
			t.Fatal(err)
		}
		if m := out.(map[string]any); m["a"] != "secret-0" || m["d"] == "secret-3" {
			t.Fatalf("Detokenize past the budget = %v, want token 0 revealed and 3 not", m)
		}
		if got, _ := e.V.GetApplication(ctx, e.Mgmt, reader.ID); got.FrozenAt != nil {
			t.Fatalf("without freeze the application was frozen at %v", got.FrozenAt)
		}

		e.Clock.Advance(time.Hour)
		if d := read(3); d != "secret-3" {
			t.Fatalf("in a new window, token 3 = %v, want it revealed", d)
		}
	})
}

// TestRevealBudgetListTripsAtTheBudget: one page of a list reveals
// exactly the budget's number of tokens and masks the rest.
func TestRevealBudgetListTripsAtTheBudget(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tap, toks, reader := breakerEnv(t, e, 5, tokenvault.RevealBudget{Tokens: 3, Window: "24h"})
		page, err := e.V.ListTokens(ctx, reader.Key, tokenvault.ListTokensRequest{})
		if err != nil {
			t.Fatal(err)
		}
		revealed := 0
		for _, tok := range page.Data {
			if tok.Data != nil && tok.Data != tok.Mask {
				revealed++
			}
		}
		if len(page.Data) != len(toks) || revealed != 3 {
			t.Fatalf("ListTokens: %d tokens, %d revealed; want %d, 3 revealed", len(page.Data), revealed, len(toks))
		}
		if n := anomalies(tap); n != 1 {
			t.Fatalf("%d anomalies, want 1", n)
		}
	})
}

// TestRevealBudgetRefusesAndFreezes: a refusing budget with freeze fails
// the read that crosses it and freezes the key: every call of it, and of
// a session it authorized, is ErrKeyFrozen until a manager releases it,
// after which it works again.
func TestRevealBudgetRefusesAndFreezes(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tap, toks, reader := breakerEnv(t, e, 3, tokenvault.RevealBudget{Tokens: 2, Window: "1h", Action: tokenvault.BudgetRefuse, Freeze: true})
		sess := e.Session(t)
		if err := e.V.AuthorizeSession(ctx, reader.Key, tokenvault.AuthorizeSessionRequest{Nonce: sess.Nonce,
			Permissions: []string{tokenvault.PermTokenRead}}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if _, err := e.V.GetToken(ctx, reader.Key, toks[i].ID); err != nil {
				t.Fatalf("GetToken(%d) within the budget: %v", i, err)
			}
		}
		_, err := e.V.Detokenize(ctx, reader.Key, []any{"{{" + toks[2].ID + "}}"})
		if !errors.Is(err, tokenvault.ErrRevealBudget) {
			t.Fatalf("Detokenize past a refusing budget: %v, want ErrRevealBudget", err)
		}
		if n := anomalies(tap); n != 1 {
			t.Fatalf("%d anomalies, want 1", n)
		}
		for what, call := range map[string]func() error{
			"GetToken": func() error { _, err := e.V.GetToken(ctx, reader.Key, toks[0].ID); return err },
			"ListTokens": func() error {
				_, err := e.V.ListTokens(ctx, reader.Key, tokenvault.ListTokensRequest{})
				return err
			},
			"session GetToken": func() error { _, err := e.V.GetToken(ctx, sess.SessionKey, toks[0].ID); return err },
		} {
			if err := call(); !errors.Is(err, tokenvault.ErrKeyFrozen) || !errors.Is(err, tokenvault.ErrPermissionDenied) {
				t.Errorf("%s of a frozen key: %v, want ErrKeyFrozen (PermissionDenied)", what, err)
			}
		}
		app, err := e.V.GetApplication(ctx, e.Mgmt, reader.ID)
		if err != nil || app.FrozenAt == nil || app.FrozenReason != "reveal_budget" {
			t.Fatalf("GetApplication = frozen %v %q, %v; want frozen for reveal_budget", app.FrozenAt, app.FrozenReason, err)
		}
		// Only a manager releases it; the frozen key cannot.
		if _, err := e.V.UnfreezeApplication(ctx, reader.Key, reader.ID); err == nil {
			t.Fatal("the frozen key released itself")
		}
		app, err = e.V.UnfreezeApplication(ctx, e.Mgmt, reader.ID)
		if err != nil || app.FrozenAt != nil {
			t.Fatalf("UnfreezeApplication = %+v, %v", app, err)
		}
		tok, err := e.V.GetToken(ctx, reader.Key, toks[2].ID)
		if err != nil || tok.Data != "secret-2" {
			t.Fatalf("after release, GetToken = %v, %v; want it revealed (a new window)", tok, err)
		}
		if _, err := e.V.GetToken(ctx, sess.SessionKey, toks[0].ID); err != nil {
			t.Fatalf("after release, the session's GetToken: %v", err)
		}
	})
}

// TestRevealBudgetValidation: bad budgets are Invalid with their field.
func TestRevealBudgetValidation(t *testing.T) {
	e := vaulttest.NewEnv(t)
	for _, tc := range []struct {
		b     tokenvault.RevealBudget
		field string
	}{
		{tokenvault.RevealBudget{Tokens: -1, Window: "1h"}, "reveal_budget.tokens"},
		{tokenvault.RevealBudget{Tokens: 1, Window: "soon"}, "reveal_budget.window"},
		{tokenvault.RevealBudget{Tokens: 1, Window: "1s"}, "reveal_budget.window"},
		{tokenvault.RevealBudget{Tokens: 1, Window: "1h", Action: "shout"}, "reveal_budget.action"},
	} {
		_, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "x", Type: tokenvault.Private, RevealBudget: &tc.b})
		vaulttest.WantField(t, err, tc.field)
	}
}

// TestRevealBudgetCountsSessions: the reveals of a session count against
// the budget of the application that authorized it, with the
// application's own.
func TestRevealBudgetCountsSessions(t *testing.T) {
	e := vaulttest.NewEnv(t)
	_, toks, reader := breakerEnv(t, e, 3, tokenvault.RevealBudget{Tokens: 2, Window: "1h"})
	sess := e.Session(t)
	if err := e.V.AuthorizeSession(ctx, reader.Key, tokenvault.AuthorizeSessionRequest{Nonce: sess.Nonce,
		Rules: []tokenvault.AccessRule{{Priority: 1, Transform: tokenvault.TransformReveal, Permissions: []string{tokenvault.PermTokenRead}}}}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		tok, err := e.V.GetToken(ctx, sess.SessionKey, toks[i].ID)
		if err != nil || tok.Data != fmt.Sprintf("secret-%d", i) {
			t.Fatalf("the session's GetToken(%d) = %v, %v; want it revealed", i, tok, err)
		}
	}
	tok, err := e.V.GetToken(ctx, reader.Key, toks[2].ID)
	if err != nil || tok.Data == "secret-2" {
		t.Fatalf("the authorizer's GetToken after its session used the budget = %v, %v; want it masked", tok, err)
	}
}

// TestDecoyReadByAReactorFreezes: a reactor's arguments naming a decoy
// are a read of it by the invoking key: the invocation answers, and the
// key is frozen.
func TestDecoyReadByAReactorFreezes(t *testing.T) {
	e := vaulttest.NewEnv(t)
	caller := e.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenUse)
	decoy, err := e.V.CreateDecoy(ctx, e.Mgmt, tokenvault.CreateDecoyRequest{ApplicationID: caller.ID,
		Token: tokenvault.TokenRequest{Type: "token", Data: "decoy-value"}})
	if err != nil {
		t.Fatal(err)
	}
	rx, err := e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "echo",
		Code: `module.exports = async (req) => ({raw: {n: req.args.n.length}})`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.InvokeReactor(ctx, caller.Key, rx.ID, tokenvault.InvokeReactorRequest{
		Args: map[string]any{"n": "{{ " + decoy.ID + " }}"}}); err != nil {
		t.Fatalf("InvokeReactor with a decoy: %v, want it answered", err)
	}
	if _, err := e.V.CreateToken(ctx, caller.Key, tokenvault.TokenRequest{Type: "token", Data: "x"}); !errors.Is(err, tokenvault.ErrKeyFrozen) {
		t.Fatalf("after a reactor read a decoy, the caller's CreateToken: %v, want ErrKeyFrozen", err)
	}
}

// TestRevealBudgetHoldsUpdateAnswers: an update's answer shows the stored
// data where the update rule reveals it; past the budget it is masked.
func TestRevealBudgetHoldsUpdateAnswers(t *testing.T) {
	e := vaulttest.NewEnv(t)
	_, toks, _ := breakerEnv(t, e, 2, tokenvault.RevealBudget{Tokens: 1, Window: "1h"})
	b := tokenvault.RevealBudget{Tokens: 1, Window: "1h"}
	updater, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "updater", Type: tokenvault.Private, RevealBudget: &b,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
			Permissions: []string{tokenvault.PermTokenRead, tokenvault.PermTokenUpdate}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		tok, err := e.V.UpdateToken(ctx, updater.Key, toks[i].ID, json.RawMessage(`{"metadata": {"k": "v"}}`))
		if err != nil {
			t.Fatalf("UpdateToken(%d): %v", i, err)
		}
		if revealed := tok.Data == fmt.Sprintf("secret-%d", i); revealed != want {
			t.Errorf("UpdateToken(%d) answered data %v, revealed %v, want %v", i, tok.Data, revealed, want)
		}
	}
}

// TestRevealBudgetConcurrentReads: readers at once, each of another
// token, reveal exactly the budget's number between them, and the
// crossing fires access.anomaly once.
func TestRevealBudgetConcurrentReads(t *testing.T) {
	t.Parallel()
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tap, toks, reader := breakerEnv(t, e, 20, tokenvault.RevealBudget{Tokens: 5, Window: "1h"})
		revealed := make(chan bool, len(toks))
		var wg sync.WaitGroup
		for i, tok := range toks {
			wg.Go(func() {
				got, err := e.V.GetToken(ctx, reader.Key, tok.ID)
				if err != nil {
					t.Errorf("GetToken(%d): %v", i, err)
					return
				}
				revealed <- got.Data == fmt.Sprintf("secret-%d", i)
			})
		}
		wg.Wait()
		close(revealed)
		n := 0
		for r := range revealed {
			if r {
				n++
			}
		}
		if n != 5 {
			t.Errorf("%d tokens revealed by concurrent reads, want 5", n)
		}
		if a := anomalies(tap); a != 1 {
			t.Errorf("%d anomalies, want 1", a)
		}
	})
}
