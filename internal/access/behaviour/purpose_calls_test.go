package access_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// purposeEnv is a tenant with the purposes fraud-review and support, an
// application whose only way to read and use tokens is a rule for
// fraud-review (reveal), and a token it made.
type purposeEnv struct {
	*vaulttest.Env
	app *tokenvault.Application
	tok *tokenvault.Token
}

func newPurposeEnv(t *testing.T, e *vaulttest.Env) *purposeEnv {
	t.Helper()
	if _, err := e.V.SetPurposes(ctx, e.Mgmt, tokenvault.SetPurposesRequest{Purposes: []tokenvault.Purpose{
		{Name: "fraud-review", Description: "Reviewing a payment flagged as fraud"},
		{Name: "support", Description: "Answering the card holder"},
	}}); err != nil {
		t.Fatal(err)
	}
	app, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "reviewer", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate},
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal",
			Permissions: []string{tokenvault.PermTokenRead, tokenvault.PermTokenUse}, Purposes: []string{"fraud-review"}}}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	return &purposeEnv{Env: e, app: app, tok: tok}
}

// TestPurposeSessions: a session is held to its authorizer's rules with
// their purposes, for the purpose its own call names.
func TestPurposeSessions(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		pe := newPurposeEnv(t, e)
		s := e.Session(t)
		if err := e.V.AuthorizeSession(ctx, pe.app.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce,
			Rules: []tokenvault.AccessRule{{Priority: 1, Transform: "reveal", Permissions: []string{tokenvault.PermTokenRead}}}}); err != nil {
			t.Fatalf("AuthorizeSession: %v", err)
		}
		_, err := e.V.GetToken(ctx, s.SessionKey, pe.tok.ID)
		wantPurposeInvalid(t, "a session's read without a purpose", err)
		_, err = e.V.GetToken(tokenvault.WithPurpose(ctx, "support"), s.SessionKey, pe.tok.ID)
		vaulttest.WantKind(t, "a session's read for support", err, tokenvault.PermissionDenied)
		got, err := e.V.GetToken(tokenvault.WithPurpose(ctx, "fraud-review"), s.SessionKey, pe.tok.ID)
		if err != nil || got.Data != "secret" {
			t.Fatalf("a session's read for fraud-review = %+v, %v; want the data", got, err)
		}
		report, err := e.V.TokenAccess(ctx, e.Mgmt, pe.tok.ID)
		if err != nil || len(report.Data) == 0 || report.Data[0].Purpose != "fraud-review" || report.Data[0].ActorType != tokenvault.ActorSession {
			t.Errorf("TokenAccess after the session's read: %+v, %v; want its line with the purpose", report, err)
		}
	})
}

// TestPurposeReactors: a reactor's arguments and its own client calls
// are decided for the purpose of the call that invokes it, and their
// lines name it.
func TestPurposeReactors(t *testing.T) {
	e := vaulttest.NewEnv(t)
	pe := newPurposeEnv(t, e)
	caller, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "caller", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenUse}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "reads",
		Code:        `module.exports = async (req) => ({raw: (await req.client.getToken("` + pe.tok.ID + `")).data})`,
		Application: &tokenvault.Ref{ID: pe.app.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := e.V.InvokeReactor(ctx, caller.Key, r.ID, tokenvault.InvokeReactorRequest{}); err == nil {
		t.Errorf("a reactor reading a purpose-only token, invoked without a purpose: %+v; want an error", out)
	}
	out, err := e.V.InvokeReactor(tokenvault.WithPurpose(ctx, "fraud-review"), caller.Key, r.ID, tokenvault.InvokeReactorRequest{})
	if err != nil || vaulttest.RoundTrip(t, out.Raw) != "secret" {
		t.Fatalf("the reactor invoked for fraud-review = %+v, %v; want the data", out, err)
	}
	report, err := e.V.TokenAccess(ctx, e.Mgmt, pe.tok.ID)
	if err != nil || len(report.Data) == 0 || report.Data[0].Purpose != "fraud-review" {
		t.Errorf("TokenAccess after the reactor's read: %+v, %v; want its line with the purpose", report, err)
	}

	// The arguments: detokenized under the caller's own rules, for its
	// purpose.
	_, err = e.V.InvokeReactor(ctx, pe.app.Key, r.ID, tokenvault.InvokeReactorRequest{
		Args: map[string]any{"x": "{{ " + pe.tok.ID + " }}"}})
	wantPurposeInvalid(t, "arguments naming a purpose-only token, without a purpose", err)
}
