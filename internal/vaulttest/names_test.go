package vaulttest_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestControlCharactersRefused sends a NUL, an escape or a C1 control in
// every name, metadata key, custom id and container a caller sets or
// queries by, and wants Invalid naming the field.
func TestControlCharactersRefused(t *testing.T) {
	e := vaulttest.NewEnv(t)
	tokens := e.Reader(t, "reveal", "token:create", "token:read", "token:update", "token:search")
	const code = `module.exports = async function (req) { return { raw: {} } }`
	f, err := e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "f", Code: code})
	if err != nil {
		t.Fatal(err)
	}
	app := e.App(t, tokenvault.Private, "token:read")
	tok, err := e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, field string
		call        func() error
	}{
		{"application name", "name", func() error {
			_, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "a\x00b", Type: tokenvault.Private, Permissions: []string{"token:read"}})
			return err
		}},
		{"application rename", "name", func() error {
			_, err := e.V.UpdateApplication(ctx, e.Mgmt, app.ID, tokenvault.UpdateApplicationRequest{Name: "a\x1bb", Permissions: []string{"token:read"}})
			return err
		}},
		{"proxy name", "name", func() error {
			_, err := e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "p\x00", DestinationURL: "https://example.com/in"})
			return err
		}},
		{"formula name", "name", func() error {
			_, err := e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "f\x00", Code: code})
			return err
		}},
		{"formula configuration name", "configuration[0].name", func() error {
			_, err := e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "f", Code: code,
				Configuration: []tokenvault.ConfigurationDeclaration{{Name: "k\x00", Type: "string"}}})
			return err
		}},
		{"formula request parameter name", "request_parameters[0].name", func() error {
			_, err := e.V.CreateFormula(ctx, e.Mgmt, tokenvault.FormulaRequest{Name: "f", Code: code,
				RequestParameters: []tokenvault.RequestParameter{{Name: "a.\x00", Type: "string"}}})
			return err
		}},
		{"reactor name", "name", func() error {
			_, err := e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "r\u0085", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{}})
			return err
		}},
		{"tenant name", "name", func() error {
			_, err := e.V.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t\x00", Owner: tokenvault.User{Email: "o@example.com"}})
			return err
		}},
		{"tenant application name", "application_name", func() error {
			_, err := e.V.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t", ApplicationName: "m\x00", Owner: tokenvault.User{Email: "o@example.com"}})
			return err
		}},
		{"owner first name", "owner.first_name", func() error {
			_, err := e.V.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t", Owner: tokenvault.User{Email: "o@example.com", FirstName: "O\x00"}})
			return err
		}},
		{"owner e-mail", "owner.email", func() error {
			_, err := e.V.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "t", Owner: tokenvault.User{Email: "o\x00@example.com"}})
			return err
		}},
		{"metadata key", "metadata", func() error {
			_, err := e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "x", Metadata: map[string]string{"m\x00": "v"}})
			return err
		}},
		{"metadata key by update", "metadata", func() error {
			_, err := e.V.UpdateToken(ctx, tokens.Key, tok.ID, []byte(`{"metadata": {"m\u0000": "v"}}`))
			return err
		}},
		{"custom id (C1)", "id", func() error {
			_, err := e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{ID: "abc\u0085def", Type: "token", Data: "x"})
			return err
		}},
		{"container", "containers[0]", func() error {
			_, err := e.V.CreateToken(ctx, tokens.Key, tokenvault.TokenRequest{Type: "token", Data: "x", Containers: []string{"/a\x00/"}})
			return err
		}},
		{"listed metadata key", "metadata", func() error {
			_, err := e.V.ListTokens(ctx, tokens.Key, tokenvault.ListTokensRequest{Metadata: map[string]string{"m\x00": "v"}})
			return err
		}},
		{"searched metadata key", "query", func() error {
			_, err := e.V.SearchTokens(ctx, tokens.Key, tokenvault.SearchTokensRequest{Query: "metadata.m\x00:v"})
			return err
		}},
		{"listed container", "container", func() error {
			_, err := e.V.ListTokens(ctx, tokens.Key, tokenvault.ListTokensRequest{Container: "/\x00/"})
			return err
		}},
		{"session condition value", "rules[0].conditions[0].value", func() error {
			return e.V.AuthorizeSession(ctx, app.Key, tokenvault.AuthorizeSessionRequest{Nonce: "n", Rules: []tokenvault.AccessRule{{Priority: 1,
				Transform: "reveal", Permissions: []string{"token:read"},
				Conditions: []tokenvault.Condition{{Attribute: "container", Operator: "starts_with", Value: "/a\x00/"}}}}})
		}},
		{"log entity type", "entity_type", func() error {
			_, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "\x00"})
			return err
		}},
		{"log entity id", "entity_id", func() error {
			_, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "token", EntityID: "\x00abc"})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			vaulttest.WantKind(t, tc.name, err, tokenvault.Invalid)
			if fields := err.(*tokenvault.Error).Fields; len(fields[tc.field]) == 0 {
				t.Errorf("%s: error %v does not name %s", tc.name, err, tc.field)
			}
		})
	}
}
