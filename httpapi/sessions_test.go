package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/testfake"
)

func withClock(c *testfake.Clock) func(*tokenvault.Options) {
	return func(o *tokenvault.Options) { o.Now = c.Now }
}

func TestSessionsOverHTTP(t *testing.T) {
	clock := testfake.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := newServer(t, httpapi.Options{}, withClock(clock))
	_, public := s.app(t, map[string]any{"name": "web", "type": "public", "permissions": []string{"token:create"}})
	_, private := s.app(t, map[string]any{"name": "backend", "type": "private",
		"rules": []map[string]any{{"priority": 1, "container": "/", "transform": "reveal", "permissions": []string{"token:create", "token:read"}}}})
	r := s.do(t, "POST", "/tokenize", private, `{"a": "alpha", "b": {"type": "token", "data": "beta", "containers": ["/other/"]}}`)
	wantStatus(t, "POST /tokenize", r, 201)
	var out struct {
		A string
		B struct{ ID string }
	}
	r.json(t, &out)
	ids := struct{ A, B string }{out.A, out.B.ID}

	for name, key := range map[string]string{"management": s.mgmt, "private": private} {
		r = s.do(t, "POST", "/sessions", key, nil)
		wantStatus(t, "POST /sessions with a "+name+" key", r, http.StatusForbidden)
		r.problem(t)
	}
	r = s.do(t, "POST", "/sessions", "", nil)
	wantStatus(t, "POST /sessions without a key", r, http.StatusUnauthorized)

	r = s.do(t, "POST", "/sessions", public, nil)
	wantStatus(t, "POST /sessions", r, http.StatusCreated)
	var sess struct {
		SessionKey string    `json:"session_key"`
		Nonce      string    `json:"nonce"`
		ExpiresAt  time.Time `json:"expires_at"`
	}
	r.json(t, &sess)
	if sess.SessionKey == "" || sess.Nonce == "" || !sess.ExpiresAt.Equal(clock.Now().Add(3*time.Minute)) {
		t.Fatalf("POST /sessions = %s", r.body)
	}

	r = s.do(t, "GET", "/tokens/"+ids.A, sess.SessionKey, nil)
	wantStatus(t, "GET /tokens/{id} with an unauthorized session", r, http.StatusForbidden)
	r = s.do(t, "GET", "/permissions", sess.SessionKey, nil)
	wantStatus(t, "GET /permissions with an unauthorized session", r, http.StatusForbidden)

	r = s.do(t, "POST", "/sessions/authorize", private, map[string]any{"nonce": sess.Nonce,
		"rules": []map[string]any{{"priority": 1, "container": "/general/", "permissions": []string{"token:read"}}}})
	wantStatus(t, "authorize with a container rule", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["rules[0].container"] == nil {
		t.Errorf("errors = %v, want one on rules[0].container", p.Errors)
	}
	r = s.do(t, "POST", "/sessions/authorize", private, map[string]any{"nonce": sess.Nonce})
	wantStatus(t, "authorize with nothing granted", r, http.StatusBadRequest)
	r = s.do(t, "POST", "/sessions/authorize", public, map[string]any{"nonce": sess.Nonce, "permissions": []string{"token:create"}})
	wantStatus(t, "authorize with a public key", r, http.StatusForbidden)

	at := clock.Now().Add(10 * time.Minute)
	r = s.do(t, "POST", "/sessions/authorize", private, map[string]any{"nonce": sess.Nonce, "expires_at": at,
		"rules": []map[string]any{{"priority": 1, "transform": "reveal", "permissions": []string{"token:read"},
			"conditions": []map[string]any{{"attribute": "id", "operator": "equals", "value": ids.A}}}}})
	wantStatus(t, "POST /sessions/authorize", r, http.StatusNoContent)
	if len(r.body) != 0 {
		t.Errorf("authorize body = %s, want none", r.body)
	}
	r = s.do(t, "POST", "/sessions/authorize", private, map[string]any{"nonce": sess.Nonce, "permissions": []string{"token:read"}})
	wantStatus(t, "authorize twice with one nonce", r, http.StatusBadRequest)
	if p := r.problem(t); p.Errors["nonce"] == nil {
		t.Errorf("errors = %v, want one on nonce", p.Errors)
	}

	r = s.do(t, "GET", "/tokens/"+ids.A, sess.SessionKey, nil)
	wantStatus(t, "GET /tokens/{id} the conditions reach", r, http.StatusOK)
	var tok tokenvault.Token
	r.json(t, &tok)
	if tok.Data != "alpha" {
		t.Errorf("data = %v, want revealed", tok.Data)
	}
	r = s.do(t, "GET", "/tokens/"+ids.B, sess.SessionKey, nil)
	wantStatus(t, "GET /tokens/{id} the conditions do not reach", r, http.StatusForbidden)
	r = s.do(t, "POST", "/tokenize", sess.SessionKey, `{"c": "gamma"}`)
	wantStatus(t, "POST /tokenize without token:create", r, http.StatusForbidden)

	clock.Advance(5 * time.Minute)
	r = s.do(t, "GET", "/tokens/"+ids.A, sess.SessionKey, nil)
	wantStatus(t, "past the default lifetime, before expires_at", r, http.StatusOK)
	clock.Advance(5 * time.Minute)
	r = s.do(t, "GET", "/tokens/"+ids.A, sess.SessionKey, nil)
	wantStatus(t, "at expires_at", r, http.StatusUnauthorized)
	r.problem(t)
}

// TestSessionEndsWithItsAuthorizerOverHTTP: deleting the application that
// authorized a session ends the session (401).
func TestSessionEndsWithItsAuthorizerOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, public := s.app(t, map[string]any{"name": "web", "type": "public", "permissions": []string{"token:create"}})
	privateID, private := s.app(t, map[string]any{"name": "backend", "type": "private", "permissions": []string{"token:create", "token:read"}})
	r := s.do(t, "POST", "/tokens", private, map[string]any{"type": "token", "data": "x"})
	wantStatus(t, "POST /tokens", r, http.StatusCreated)
	var tok tokenvault.Token
	r.json(t, &tok)
	r = s.do(t, "POST", "/sessions", public, nil)
	wantStatus(t, "POST /sessions", r, http.StatusCreated)
	var sess tokenvault.Session
	r.json(t, &sess)
	r = s.do(t, "POST", "/sessions/authorize", private, map[string]any{"nonce": sess.Nonce, "permissions": []string{"token:read"}})
	wantStatus(t, "POST /sessions/authorize", r, http.StatusNoContent)
	r = s.do(t, "GET", "/tokens/"+tok.ID, string(sess.SessionKey), nil)
	wantStatus(t, "GET /tokens/{id} with the session", r, http.StatusOK)

	r = s.do(t, "DELETE", "/applications/"+privateID, s.mgmt, nil)
	wantStatus(t, "DELETE /applications/{authorizer}", r, http.StatusNoContent)
	r = s.do(t, "GET", "/tokens/"+tok.ID, string(sess.SessionKey), nil)
	wantStatus(t, "GET /tokens/{id} with the session after its authorizer is deleted", r, http.StatusUnauthorized)
	r.problem(t)
}
