package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestBreakerErrorsThroughTheClient: over HTTP, a reveal past a refusing
// budget is ErrRevealBudget and every later call of the frozen key
// ErrKeyFrozen, as in process (errors.Is holds), and UnfreezeApplication
// releases it.
func TestBreakerErrorsThroughTheClient(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	writer, err := p.v.CreateApplication(ctx, p.mgmt, tokenvault.CreateApplicationRequest{Name: "writer", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal, Permissions: []string{tokenvault.PermTokenCreate}}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range []string{"one", "two"} {
		tok, err := p.v.CreateToken(ctx, writer.Key, tokenvault.TokenRequest{Type: "token", Data: d})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tok.ID)
	}
	reader, err := p.c.CreateApplication(ctx, p.mgmt, tokenvault.CreateApplicationRequest{Name: "reader", Type: tokenvault.Private,
		Rules:        []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal, Permissions: []string{tokenvault.PermTokenRead}}},
		RevealBudget: &tokenvault.RevealBudget{Tokens: 1, Window: "1h", Action: tokenvault.BudgetRefuse, Freeze: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.GetToken(ctx, reader.Key, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := p.c.GetToken(ctx, reader.Key, ids[1]); !errors.Is(err, tokenvault.ErrRevealBudget) {
		t.Fatalf("GetToken past the budget through the client: %v, want ErrRevealBudget", err)
	}
	if _, err := p.c.GetToken(ctx, reader.Key, ids[0]); !errors.Is(err, tokenvault.ErrKeyFrozen) || !errors.Is(err, tokenvault.ErrPermissionDenied) {
		t.Fatalf("GetToken of the frozen key through the client: %v, want ErrKeyFrozen", err)
	}
	app, err := p.c.UnfreezeApplication(ctx, p.mgmt, reader.ID)
	if err != nil || app.FrozenAt != nil {
		t.Fatalf("UnfreezeApplication = %+v, %v", app, err)
	}
	if _, err := p.c.GetToken(ctx, reader.Key, ids[1]); err != nil {
		t.Fatalf("after release: %v", err)
	}
}
