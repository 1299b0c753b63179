package tokenvault_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

// session creates a session with a new public application of e's tenant.
func (e *env) session(t *testing.T) *tokenvault.Session {
	t.Helper()
	pub := e.app(t, tokenvault.Public, tokenvault.PermTokenCreate)
	s, err := e.v.CreateSession(ctx, pub.Key)
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return s
}

// authorizer creates a private application that may do anything to every
// token and see it revealed, so it can grant sessions anything.
func (e *env) authorizer(t *testing.T) *tokenvault.Application {
	t.Helper()
	return e.reader(t, "reveal", "token:create", "token:read", "token:update", "token:delete", "token:search", "token:use")
}

// authorized creates a session and authorizes it with req (Nonce filled in).
func (e *env) authorized(t *testing.T, req tokenvault.AuthorizeSessionRequest) *tokenvault.Session {
	t.Helper()
	s := e.session(t)
	req.Nonce = s.Nonce
	if err := e.v.AuthorizeSession(ctx, e.authorizer(t).Key, req); err != nil {
		t.Fatalf("AuthorizeSession: %v", err)
	}
	return s
}

func TestCreateSession(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		s := e.session(t)
		if !strings.HasPrefix(string(s.SessionKey), "ses_") || len(s.Nonce) < 40 || string(s.SessionKey) == s.Nonce {
			t.Errorf("session = %+v, want a ses_ key and a long nonce", s)
		}
		if want := e.clock.Now().Add(3 * time.Minute); !s.ExpiresAt.Equal(want) {
			t.Errorf("expires_at = %v, want %v (3 minutes after creation)", s.ExpiresAt, want)
		}
		other := e.session(t)
		if other.SessionKey == s.SessionKey || other.Nonce == s.Nonce {
			t.Error("two sessions share a key or nonce")
		}
	})
}

func TestCreateSessionNeedsPublicApplication(t *testing.T) {
	e := newEnv(t)
	for _, key := range []tokenvault.Credential{e.mgmt, e.authorizer(t).Key} {
		_, err := e.v.CreateSession(ctx, key)
		wantKind(t, "CreateSession(non-public key)", err, tokenvault.PermissionDenied)
	}
	_, err := e.v.CreateSession(ctx, "key_nope")
	wantKind(t, "CreateSession(unknown key)", err, tokenvault.Unauthenticated)
	s := e.authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:create"}})
	_, err = e.v.CreateSession(ctx, s.SessionKey)
	wantKind(t, "CreateSession(session key)", err, tokenvault.PermissionDenied)
}

func TestUnauthorizedSessionIsRefusedEverywhere(t *testing.T) {
	e := newEnv(t)
	tok := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
	s := e.session(t)
	k := s.SessionKey
	calls := map[string]func() error{
		"Tokenize":         func() error { _, err := e.v.Tokenize(ctx, k, map[string]any{"v": "x"}); return err },
		"GetToken":         func() error { _, err := e.v.GetToken(ctx, k, tok.ID); return err },
		"ListTokens":       func() error { _, err := e.v.ListTokens(ctx, k, tokenvault.ListTokensRequest{}); return err },
		"DeleteToken":      func() error { return e.v.DeleteToken(ctx, k, tok.ID) },
		"ListPermissions":  func() error { _, err := e.v.ListPermissions(ctx, k, ""); return err },
		"ListApplications": func() error { _, err := e.v.ListApplications(ctx, k, tokenvault.ListApplicationsRequest{}); return err },
		"CreateSession":    func() error { _, err := e.v.CreateSession(ctx, k); return err },
		"AuthorizeSession": func() error {
			return e.v.AuthorizeSession(ctx, k, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:read"}})
		},
		"ListLogs": func() error { _, err := e.v.ListLogs(ctx, k, tokenvault.ListLogsRequest{}); return err },
	}
	for name, call := range calls {
		wantKind(t, name+" with an unauthorized session key", call(), tokenvault.PermissionDenied)
	}
}

func TestAuthorizeSessionGrantsExactlyWhatItSays(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		card := e.token(t, cardRequest(visa))
		plain := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "secret", Containers: []string{"/general/low/"}})
		other := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "other", Containers: []string{"/other/"}})
		s := e.authorized(t, tokenvault.AuthorizeSessionRequest{Rules: []tokenvault.AccessRule{
			{Priority: 1, Transform: "reveal", Permissions: []string{"token:read"}, Conditions: []tokenvault.Condition{{Attribute: "container", Operator: "starts_with", Value: "/pci/"}}},
			{Priority: 2, Transform: "redact", Permissions: []string{"token:read"}, Conditions: []tokenvault.Condition{{Attribute: "id", Operator: "equals", Value: plain.ID}}},
		}})
		got, err := e.v.GetToken(ctx, s.SessionKey, card.ID)
		if err != nil {
			t.Fatalf("GetToken(card in /pci/): %v", err)
		}
		if d, _ := got.Data.(map[string]any); d["number"] != visa {
			t.Errorf("card data = %v, want revealed number", got.Data)
		}
		got, err = e.v.GetToken(ctx, s.SessionKey, plain.ID)
		if err != nil {
			t.Fatalf("GetToken(plain by id): %v", err)
		}
		if got.Data != nil {
			t.Errorf("plain data = %v, want redacted", got.Data)
		}
		_, err = e.v.GetToken(ctx, s.SessionKey, other.ID)
		wantKind(t, "GetToken(token no condition matches)", err, tokenvault.PermissionDenied)
		_, err = e.v.Tokenize(ctx, s.SessionKey, map[string]any{"v": "new"})
		wantKind(t, "Tokenize(permission not granted)", err, tokenvault.PermissionDenied)
		page, err := e.v.ListTokens(ctx, s.SessionKey, tokenvault.ListTokensRequest{})
		if err != nil {
			t.Fatalf("ListTokens: %v", err)
		}
		if len(page.Data) != 2 {
			t.Errorf("ListTokens = %d tokens, want the 2 the conditions reach", len(page.Data))
		}
	})
}

func TestSessionDirectPermissionsUseImplicitTransforms(t *testing.T) {
	e := newEnv(t)
	card := e.token(t, cardRequest(visa))
	s := e.authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:read", "token:create"}})
	got, err := e.v.GetToken(ctx, s.SessionKey, card.ID)
	if err != nil {
		t.Fatalf("GetToken: %v", err)
	}
	if d, _ := got.Data.(map[string]any); d["number"] != "XXXXXXXXXXXX4242" {
		t.Errorf("data = %v, want the mask (token:read's implicit transform)", got.Data)
	}
	out, err := e.v.Tokenize(ctx, s.SessionKey, map[string]any{"ssn": "123-45-6789"})
	if err != nil {
		t.Fatalf("Tokenize with session key: %v", err)
	}
	id := out.(map[string]any)["ssn"].(string)
	logs, err := e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{EntityType: "token", EntityID: id})
	if err != nil || len(logs.Data) == 0 || logs.Data[0].ActorType != tokenvault.ActorSession {
		t.Errorf("log of a session's token = %+v, %v; want actor type session", logs, err)
	}
}

func TestSessionNeverExceedsItsAuthorizer(t *testing.T) {
	e := newEnv(t)
	card := e.token(t, cardRequest(visa))
	plain := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
	// The authorizer reads /pci/ masked and nothing else.
	narrow, err := e.v.CreateApplication(ctx, e.mgmt, tokenvault.CreateApplicationRequest{
		Name: "narrow", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/pci/", Transform: "mask", Permissions: []string{"token:read"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := e.session(t)
	err = e.v.AuthorizeSession(ctx, narrow.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:use"}})
	wantKind(t, "granting a permission the authorizer lacks", err, tokenvault.PermissionDenied)
	err = e.v.AuthorizeSession(ctx, narrow.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Rules: []tokenvault.AccessRule{
		{Priority: 1, Transform: "reveal", Permissions: []string{"token:read"}},
	}})
	if err != nil {
		t.Fatalf("AuthorizeSession: %v (the refused attempt must not have used the nonce)", err)
	}
	got, err := e.v.GetToken(ctx, s.SessionKey, card.ID)
	if err != nil {
		t.Fatalf("GetToken(card): %v", err)
	}
	if d, _ := got.Data.(map[string]any); d["number"] != "XXXXXXXXXXXX4242" {
		t.Errorf("data = %v, want the authorizer's mask, not the session's reveal", got.Data)
	}
	_, err = e.v.GetToken(ctx, s.SessionKey, plain.ID)
	wantKind(t, "GetToken outside the authorizer's containers", err, tokenvault.PermissionDenied)
}

func TestAuthorizeSessionNonce(t *testing.T) {
	e := newEnv(t)
	auth := e.authorizer(t)
	read := []string{"token:read"}
	s := e.session(t)

	// Another tenant's authorizer gets the answer an unknown nonce gets,
	// and does not use the nonce up.
	e2 := e.tenant(t, "Other")
	otherAuth, err := e.v.CreateApplication(ctx, e2.Application.Key, tokenvault.CreateApplicationRequest{Name: "a", Type: tokenvault.Private, Permissions: read})
	if err != nil {
		t.Fatal(err)
	}
	errOther := e.v.AuthorizeSession(ctx, otherAuth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: read})
	errUnknown := e.v.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: "not-a-nonce", Permissions: read})
	wantField(t, errOther, "nonce")
	if errOther.Error() != errUnknown.Error() {
		t.Errorf("other tenant's nonce: %v; unknown nonce: %v; want the same answer", errOther, errUnknown)
	}

	if err := e.v.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: read}); err != nil {
		t.Fatalf("AuthorizeSession: %v", err)
	}
	err = e.v.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:read", "token:use"}})
	wantField(t, err, "nonce")
	if err.Error() != errUnknown.Error() {
		t.Errorf("reused nonce: %v, want the unknown-nonce answer", err)
	}
	// The second attempt changed nothing.
	tok := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
	if _, err := e.v.Detokenize(ctx, s.SessionKey, map[string]any{"v": "{{" + tok.ID + "}}"}); err != nil {
		t.Errorf("Detokenize with token:read: %v", err)
	}
	logs, err := e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{EntityType: "session"})
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
	e := newEnv(t)
	s := e.session(t)
	pub := e.app(t, tokenvault.Public, "token:create")
	for _, key := range []tokenvault.Credential{e.mgmt, pub.Key} {
		err := e.v.AuthorizeSession(ctx, key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: []string{"token:create"}})
		wantKind(t, "AuthorizeSession(non-private key)", err, tokenvault.PermissionDenied)
	}
}

func TestAuthorizeSessionValidation(t *testing.T) {
	e := newEnv(t)
	auth := e.authorizer(t)
	s := e.session(t)
	now := e.clock.Now()
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
	settleChain(t, e.v)
	before := dump(t, e.store)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantField(t, e.v.AuthorizeSession(ctx, auth.Key, tt.req), tt.field)
		})
	}
	if after := dump(t, e.store); len(after) != len(before) {
		t.Errorf("refused authorizations wrote %d entries", len(after)-len(before))
	}
	// None of them used the nonce.
	if err := e.v.AuthorizeSession(ctx, auth.Key, tokenvault.AuthorizeSessionRequest{Nonce: s.Nonce, Permissions: read}); err != nil {
		t.Errorf("AuthorizeSession after refused attempts: %v", err)
	}
}

func TestSessionExpiry(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		tok := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
		read := func(s *tokenvault.Session) error { _, err := e.v.GetToken(ctx, s.SessionKey, tok.ID); return err }

		byDefault := e.authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:read"}})
		at := e.clock.Now().Add(10 * time.Minute)
		extended := e.authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:read"}, ExpiresAt: &at})
		unauthorized := e.session(t)

		e.clock.Advance(3*time.Minute - time.Nanosecond)
		if err := read(byDefault); err != nil {
			t.Fatalf("a nanosecond before expiry: %v", err)
		}
		e.clock.Advance(time.Nanosecond)
		wantKind(t, "at the instant of expiry", read(byDefault), tokenvault.Unauthenticated)
		if err := read(extended); err != nil {
			t.Fatalf("session authorized with a later expires_at: %v", err)
		}
		err := e.v.AuthorizeSession(ctx, e.authorizer(t).Key, tokenvault.AuthorizeSessionRequest{Nonce: unauthorized.Nonce, Permissions: []string{"token:read"}})
		wantField(t, err, "nonce")

		n, err := e.v.Sweep(ctx)
		if err != nil || n != 2 {
			t.Fatalf("Sweep = %d, %v; want the 2 expired sessions", n, err)
		}
		e.clock.Advance(7 * time.Minute)
		wantKind(t, "extended session at its expires_at", read(extended), tokenvault.Unauthenticated)
		if n, err := e.v.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("second Sweep = %d, %v; want 1", n, err)
		}
		for k := range dump(t, e.store) {
			_, rest, _ := strings.Cut(strings.TrimPrefix(k, "tenant/"), "/")
			if strings.HasPrefix(rest, "session/") || strings.HasPrefix(k, "sys/nonce/") || strings.HasPrefix(k, "sys/expiry/") {
				t.Errorf("swept session left %s", k)
			}
		}
		logs, err := e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{EntityType: "session"})
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
	e := newEnv(t)
	s := e.authorized(t, tokenvault.AuthorizeSessionRequest{Permissions: []string{"token:read"}})
	pending := e.session(t)
	for k, v := range dump(t, e.store) {
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
