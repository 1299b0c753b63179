package sessions_test

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestSessionLivesOnItsApplications: a session stops working when the
// public application that created it or the private one that authorized
// it is deleted or expires, and loses what its authorizer loses.
func TestSessionLivesOnItsApplications(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
		for _, tc := range []struct {
			name string
			// cut ends the authority of one of the session's applications.
			cut  func(t *testing.T, creator, authorizer *tokenvault.Application)
			want tokenvault.Kind
		}{
			{"creator deleted", func(t *testing.T, c, _ *tokenvault.Application) {
				must(t, e.V.DeleteApplication(ctx, e.Mgmt, c.ID))
			}, tokenvault.Unauthenticated},
			{"authorizer deleted", func(t *testing.T, _, a *tokenvault.Application) {
				must(t, e.V.DeleteApplication(ctx, e.Mgmt, a.ID))
			}, tokenvault.Unauthenticated},
			{"authorizer loses token:read", func(t *testing.T, _, a *tokenvault.Application) {
				_, err := e.V.UpdateApplication(ctx, e.Mgmt, a.ID, tokenvault.UpdateApplicationRequest{
					Name: a.Name, Permissions: []string{tokenvault.PermTokenCreate}})
				must(t, err)
			}, tokenvault.PermissionDenied},
			{"authorizer expires", func(t *testing.T, _, _ *tokenvault.Application) {
				e.Clock.Advance(2 * time.Minute) // the session has 30
			}, tokenvault.Unauthenticated},
		} {
			t.Run(tc.name, func(t *testing.T) {
				creator := e.App(t, tokenvault.Public, tokenvault.PermTokenCreate)
				authorizerExpires := e.Clock.Now().Add(time.Minute)
				sessionExpires := e.Clock.Now().Add(30 * time.Minute)
				authorizer, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
					Name: "authorizer", Type: tokenvault.Private, ExpiresAt: &authorizerExpires,
					Permissions: []string{tokenvault.PermTokenRead}})
				must(t, err)
				s, err := e.V.CreateSession(ctx, creator.Key)
				must(t, err)
				must(t, e.V.AuthorizeSession(ctx, authorizer.Key, tokenvault.AuthorizeSessionRequest{
					Nonce: s.Nonce, Permissions: []string{tokenvault.PermTokenRead}, ExpiresAt: &sessionExpires}))
				if _, err := e.V.GetToken(ctx, s.SessionKey, tok.ID); err != nil {
					t.Fatalf("GetToken with the session, before: %v", err)
				}
				tc.cut(t, creator, authorizer)
				_, err = e.V.GetToken(ctx, s.SessionKey, tok.ID)
				vaulttest.WantKind(t, "GetToken with the session, after", err, tc.want)
			})
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
