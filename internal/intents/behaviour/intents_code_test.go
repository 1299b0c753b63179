package intents_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestTokenIntentsInTenantCode: a reactor's code, acting as its private
// application, reads an intent (without its data), converts it with
// req.client.tokenize and a token_intent_id, finds it gone after, and
// deletes another; its application holds token-intent:read and
// token-intent:delete besides token:create.
func TestTokenIntentsInTenantCode(t *testing.T) {
	e := vaulttest.NewIntentEnv(t)
	app, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "code", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenIntentRead, tokenvault.PermTokenIntentDelete},
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: tokenvault.TransformReveal,
			Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Application: &tokenvault.Ref{ID: app.ID}, Code: `
module.exports = async function (req) {
	const seen = await req.client.getTokenIntent(req.args.intent);
	const made = await req.client.tokenize({card: {token_intent_id: req.args.intent, metadata: {by: "code"}}});
	let gone = "";
	try { await req.client.getTokenIntent(req.args.intent); } catch (e) { gone = e.message; }
	await req.client.deleteTokenIntent(req.args.other);
	return {raw: {brand: seen.card.brand, hasData: "data" in seen, id: made.card.id, gone: gone}};
};`})
	in, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard, Data: vaulttest.IntentCard()})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.V.CreateTokenIntent(ctx, e.Pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeToken, Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.V.InvokeReactor(ctx, e.User(t), r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"intent": in.ID, "other": other.ID}})
	if err != nil {
		t.Fatalf("InvokeReactor: %v", err)
	}
	raw := vaulttest.RoundTrip(t, out.Raw).(map[string]any)
	if raw["brand"] != tokenvault.BrandVisa || raw["hasData"] != false || raw["gone"] == "" {
		t.Errorf("raw = %v", raw)
	}
	tok, err := e.V.GetToken(ctx, app.Key, raw["id"].(string))
	if err != nil || tok.Type != tokenvault.TypeCard || tok.Metadata["by"] != "code" || tok.CreatedBy != app.ID {
		t.Errorf("converted token = %+v, %v", tok, err)
	}
	_, err = e.V.GetTokenIntent(ctx, e.Pub.Key, other.ID)
	vaulttest.WantKind(t, "the intent the code deleted", err, tokenvault.NotFound)
	wantIntentLines(t, e.Env, in.ID, "Token intent created", "Token intent read", "Token intent converted")
}
