package sessions_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

func TestCreateSession(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		s := e.Session(t)
		if !strings.HasPrefix(string(s.SessionKey), "ses_") || len(s.Nonce) < 40 || string(s.SessionKey) == s.Nonce {
			t.Errorf("session = %+v, want a ses_ key and a long nonce", s)
		}
		if want := e.Clock.Now().Add(3 * time.Minute); !s.ExpiresAt.Equal(want) {
			t.Errorf("expires_at = %v, want %v (3 minutes after creation)", s.ExpiresAt, want)
		}
		other := e.Session(t)
		if other.SessionKey == s.SessionKey || other.Nonce == s.Nonce {
			t.Error("two sessions share a key or nonce")
		}
	})
}

func TestCreateSessionNeedsPublicApplication(t *testing.T) {
	e := vaulttest.NewEnv(t)
	for _, key := range []tokenvault.Credential{e.Mgmt, e.Authorizer(t).Key} {
		_, err := e.V.CreateSession(ctx, key)
		vaulttest.WantKind(t, "CreateSession(non-public key)", err, tokenvault.PermissionDenied)
	}
	_, err := e.V.CreateSession(ctx, "key_nope")
	vaulttest.WantKind(t, "CreateSession(unknown key)", err, tokenvault.Unauthenticated)
	s := e.Authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:create"}})
	_, err = e.V.CreateSession(ctx, s.SessionKey)
	vaulttest.WantKind(t, "CreateSession(session key)", err, tokenvault.PermissionDenied)
}

func TestUnauthorizedSessionIsRefusedEverywhere(t *testing.T) {
	e := vaulttest.NewEnv(t)
	tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
	s := e.Session(t)
	k := s.SessionKey
	calls := map[string]func() error{
		"Tokenize":         func() error { _, err := e.V.Tokenize(ctx, k, map[string]any{"v": "x"}); return err },
		"GetToken":         func() error { _, err := e.V.GetToken(ctx, k, tok.ID); return err },
		"ListTokens":       func() error { _, err := e.V.ListTokens(ctx, k, tokenvault.ListTokensRequest{}); return err },
		"DeleteToken":      func() error { return e.V.DeleteToken(ctx, k, tok.ID) },
		"ListPermissions":  func() error { _, err := e.V.ListPermissions(ctx, k, ""); return err },
		"ListApplications": func() error { _, err := e.V.ListApplications(ctx, k, tokenvault.ListApplicationsRequest{}); return err },
		"CreateSession":    func() error { _, err := e.V.CreateSession(ctx, k); return err },
		"AuthorizeSession": func() error {
			return e.V.AuthorizeSession(ctx, k, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:read"}})
		},
		"ListLogs": func() error { _, err := e.V.ListLogs(ctx, k, tokenvault.ListLogsRequest{}); return err },
	}
	for name, call := range calls {
		vaulttest.WantKind(t, name+" with an unauthorized session key", call(), tokenvault.PermissionDenied)
	}
}

func TestAuthorizeSessionGrantsExactlyWhatItSays(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
		plain := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "secret", Containers: []string{"/general/low/"}})
		other := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "other", Containers: []string{"/other/"}})
		s := e.Authorized(t, tokenvault.AuthorizeSessionRequest{Rules: []tokenvault.AccessRule{
			{Priority: 1, Transform: "reveal", Permissions: []string{"token:read"}, Conditions: []tokenvault.Condition{{Attribute: "container", Operator: "starts_with", Value: "/pci/"}}},
			{Priority: 2, Transform: "redact", Permissions: []string{"token:read"}, Conditions: []tokenvault.Condition{{Attribute: "id", Operator: "equals", Value: plain.ID}}},
		}})
		got, err := e.V.GetToken(ctx, s.SessionKey, card.ID)
		if err != nil {
			t.Fatalf("GetToken(card in /pci/): %v", err)
		}
		if d, _ := got.Data.(map[string]any); d["number"] != vaulttest.Visa {
			t.Errorf("card data = %v, want revealed number", got.Data)
		}
		got, err = e.V.GetToken(ctx, s.SessionKey, plain.ID)
		if err != nil {
			t.Fatalf("GetToken(plain by id): %v", err)
		}
		if got.Data != nil {
			t.Errorf("plain data = %v, want redacted", got.Data)
		}
		_, err = e.V.GetToken(ctx, s.SessionKey, other.ID)
		vaulttest.WantKind(t, "GetToken(token no condition matches)", err, tokenvault.PermissionDenied)
		_, err = e.V.Tokenize(ctx, s.SessionKey, map[string]any{"v": "new"})
		vaulttest.WantKind(t, "Tokenize(permission not granted)", err, tokenvault.PermissionDenied)
		page, err := e.V.ListTokens(ctx, s.SessionKey, tokenvault.ListTokensRequest{})
		if err != nil {
			t.Fatalf("ListTokens: %v", err)
		}
		if len(page.Data) != 2 {
			t.Errorf("ListTokens = %d tokens, want the 2 the conditions reach", len(page.Data))
		}
	})
}

func TestSessionDirectPermissionsUseImplicitTransforms(t *testing.T) {
	e := vaulttest.NewEnv(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	s := e.Authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:read", "token:create"}})
	got, err := e.V.GetToken(ctx, s.SessionKey, card.ID)
	if err != nil {
		t.Fatalf("GetToken: %v", err)
	}
	if d, _ := got.Data.(map[string]any); d["number"] != "XXXXXXXXXXXX4242" {
		t.Errorf("data = %v, want the mask (token:read's implicit transform)", got.Data)
	}
	out, err := e.V.Tokenize(ctx, s.SessionKey, map[string]any{"ssn": "123-45-6789"})
	if err != nil {
		t.Fatalf("Tokenize with session key: %v", err)
	}
	id := out.(map[string]any)["ssn"].(string)
	logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "token", EntityID: id})
	if err != nil || len(logs.Data) == 0 || logs.Data[0].ActorType != tokenvault.ActorSession {
		t.Errorf("log of a session's token = %+v, %v; want actor type session", logs, err)
	}
}

func TestSessionNeverExceedsItsAuthorizer(t *testing.T) {
	e := vaulttest.NewEnv(t)
	card := e.Token(t, vaulttest.CardRequest(vaulttest.Visa))
	plain := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
	// The authorizer reads /pci/ masked and nothing else.
	narrow, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "narrow", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "mask", Permissions: []string{"token:read"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := e.Session(t)
	err = e.V.AuthorizeSession(ctx, narrow.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:use"}})
	vaulttest.WantKind(t, "granting a permission the authorizer lacks", err, tokenvault.PermissionDenied)
	err = e.V.AuthorizeSession(ctx, narrow.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Rules: []tokenvault.AccessRule{
		{Priority: 1, Transform: "reveal", Permissions: []string{"token:read"}},
	}})
	if err != nil {
		t.Fatalf("AuthorizeSession: %v (the refused attempt must not have used the nonce)", err)
	}
	got, err := e.V.GetToken(ctx, s.SessionKey, card.ID)
	if err != nil {
		t.Fatalf("GetToken(card): %v", err)
	}
	if d, _ := got.Data.(map[string]any); d["number"] != "XXXXXXXXXXXX4242" {
		t.Errorf("data = %v, want the authorizer's mask, not the session's reveal", got.Data)
	}
	_, err = e.V.GetToken(ctx, s.SessionKey, plain.ID)
	vaulttest.WantKind(t, "GetToken outside the authorizer's containers", err, tokenvault.PermissionDenied)
}

func TestAuthorizeSessionNonce(t *testing.T) {
	e := vaulttest.NewEnv(t)
	auth := e.Authorizer(t)
	read := []string{"token:read"}
	s := e.Session(t)

	// Another tenant's authorizer gets the answer an unknown nonce gets,
	// and does not use the nonce up.
	e2 := e.Tenant(t, "Other")
	otherAuth, err := e.V.CreateApplication(ctx, e2.Application.Key, tokenvault.CreateApplicationRequest{Name: "a", Type: tokenvault.Private, Permissions: read})
	if err != nil {
		t.Fatal(err)
	}
	errOther := e.V.AuthorizeSession(ctx, otherAuth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: read})
	errUnknown := e.V.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: "not-a-nonce", Permissions: read})
	vaulttest.WantField(t, errOther, "nonce")
	if errOther.Error() != errUnknown.Error() {
		t.Errorf("other tenant's nonce: %v; unknown nonce: %v; want the same answer", errOther, errUnknown)
	}

	if err := e.V.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: read}); err != nil {
		t.Fatalf("AuthorizeSession: %v", err)
	}
	err = e.V.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:read", "token:use"}})
	vaulttest.WantField(t, err, "nonce")
	if err.Error() != errUnknown.Error() {
		t.Errorf("reused nonce: %v, want the unknown-nonce answer", err)
	}
	// The second attempt changed nothing.
	tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if _, err := e.V.Detokenize(ctx, s.SessionKey, map[string]any{"v": "{{" + tok.ID + "}}"}); err != nil {
		t.Errorf("Detokenize with token:read: %v", err)
	}
	logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "session"})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, l := range logs.Data {
		msgs = append(msgs, l.Message)
	}
	if got := strings.Join(msgs, ","); got != "Session authorized,Session created" {
		t.Errorf("session logs = %s", got)
	}
}

func TestAuthorizeSessionNeedsPrivateApplication(t *testing.T) {
	e := vaulttest.NewEnv(t)
	s := e.Session(t)
	pub := e.App(t, tokenvault.Public, "token:create")
	for _, key := range []tokenvault.Credential{e.Mgmt, pub.Key} {
		err := e.V.AuthorizeSession(ctx, key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:create"}})
		vaulttest.WantKind(t, "AuthorizeSession(non-private key)", err, tokenvault.PermissionDenied)
	}
}

func TestAuthorizeSessionValidation(t *testing.T) {
	e := vaulttest.NewEnv(t)
	auth := e.Authorizer(t)
	s := e.Session(t)
	now := e.Clock.Now()
	past, far := now.Add(-time.Second), now.Add(time.Hour+time.Second)
	read := []string{"token:read"}
	cond := []tokenvault.Condition{{Attribute: "id", Operator: "equals", Value: "x"}}
	tests := []struct {
		name  string
		req   tokenvault.AuthorizeSessionRequest
		field string
	}{
		{"no nonce", tokenvault.AuthorizeSessionRequest{Permissions: read}, "nonce"},
		{"nothing granted", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce}, "permissions"},
		{"management permission", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"application:read"}}, "permissions[0]"},
		{"unknown permission", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:fly"}}, "permissions[0]"},
		{"rule with container", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Permissions: read}}}, "rules[0].container"},
		{"rule with container and conditions", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Conditions: cond, Permissions: read}}}, "rules[0].container"},
		{"bad attribute", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Rules: []tokenvault.AccessRule{{Priority: 1, Conditions: []tokenvault.Condition{{Attribute: "type", Operator: "equals", Value: "card"}}, Permissions: read}}}, "rules[0].conditions[0].attribute"},
		{"bad operator", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Rules: []tokenvault.AccessRule{{Priority: 1, Conditions: []tokenvault.Condition{{Attribute: "id", Operator: "contains", Value: "a"}}, Permissions: read}}}, "rules[0].conditions[0].operator"},
		{"empty value", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Rules: []tokenvault.AccessRule{{Priority: 1, Conditions: []tokenvault.Condition{{Attribute: "id", Operator: "equals"}}, Permissions: read}}}, "rules[0].conditions[0].value"},
		{"bad transform", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Rules: []tokenvault.AccessRule{{Priority: 1, Conditions: cond, Transform: "show", Permissions: read}}}, "rules[0].transform"},
		{"expires in the past", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: read, ExpiresAt: &past}, "expires_at"},
		{"expires now", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: read, ExpiresAt: &now}, "expires_at"},
		{"expires past the bound", tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: read, ExpiresAt: &far}, "expires_at"},
	}
	e.SettleChain(t)
	before := vaulttest.Dump(t, e.Store)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vaulttest.WantField(t, e.V.AuthorizeSession(ctx, auth.Key, tt.req), tt.field)
		})
	}
	if after := vaulttest.Dump(t, e.Store); len(after) != len(before) {
		t.Errorf("refused authorizations wrote %d entries", len(after)-len(before))
	}
	// None of them used the nonce.
	if err := e.V.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: read}); err != nil {
		t.Errorf("AuthorizeSession after refused attempts: %v", err)
	}
}

func TestSessionExpiry(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
		read := func(s *tokenvault.Session) error { _, err := e.V.GetToken(ctx, s.SessionKey, tok.ID); return err }

		byDefault := e.Authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:read"}})
		at := e.Clock.Now().Add(10 * time.Minute)
		extended := e.Authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:read"}, ExpiresAt: &at})
		unauthorized := e.Session(t)

		e.Clock.Advance(3*time.Minute - time.Nanosecond)
		if err := read(byDefault); err != nil {
			t.Fatalf("a nanosecond before expiry: %v", err)
		}
		e.Clock.Advance(time.Nanosecond)
		vaulttest.WantKind(t, "at the instant of expiry", read(byDefault), tokenvault.Unauthenticated)
		if err := read(extended); err != nil {
			t.Fatalf("session authorized with a later expires_at: %v", err)
		}
		err := e.V.AuthorizeSession(ctx, e.Authorizer(t).Key, tokenvault.AuthorizeSessionRequest{Nonce: unauthorized.Nonce, Permissions: []string{"token:read"}})
		vaulttest.WantField(t, err, "nonce")

		n, err := e.V.Sweep(ctx)
		if err != nil || n != 2 {
			t.Fatalf("Sweep = %d, %v; want the 2 expired sessions", n, err)
		}
		e.Clock.Advance(7 * time.Minute)
		vaulttest.WantKind(t, "extended session at its expires_at", read(extended), tokenvault.Unauthenticated)
		if n, err := e.V.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("second Sweep = %d, %v; want 1", n, err)
		}
		for k := range vaulttest.Dump(t, e.Store) {
			_, rest, _ := strings.Cut(strings.TrimPrefix(k, "tenant/"), "/")
			if strings.HasPrefix(rest, "session/") || strings.HasPrefix(k, "sys/nonce/") || strings.HasPrefix(k, "sys/expiry/") {
				t.Errorf("swept session left %s", k)
			}
		}
		logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: "session"})
		if err != nil {
			t.Fatal(err)
		}
		expired := 0
		for _, l := range logs.Data {
			if l.Message == "Session expired" && l.ActorType == tokenvault.ActorSystem {
				expired++
			}
		}
		if expired != 3 {
			t.Errorf("%d \"Session expired\" logs, want 3", expired)
		}
	})
}

func TestSessionSecretsAreStoredHashed(t *testing.T) {
	e := vaulttest.NewEnv(t)
	s := e.Authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:read"}})
	pending := e.Session(t)
	for k, v := range vaulttest.Dump(t, e.Store) {
		for _, secret := range []string{string(s.SessionKey), s.Nonce, string(pending.SessionKey), pending.Nonce} {
			if strings.Contains(k, secret) || bytes.Contains(v, []byte(secret)) {
				t.Fatalf("store entry %s holds a session secret in the clear", k)
			}
		}
	}
	b, _ := json.Marshal(s)
	if !bytes.Contains(b, []byte(`"session_key"`)) || !bytes.Contains(b, []byte(`"nonce"`)) || !bytes.Contains(b, []byte(`"expires_at"`)) {
		t.Errorf("Session JSON = %s", b)
	}
}
