package outbound

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestClientRefusesPrivateAddresses: the strict client refuses to dial a
// loopback address (the check is on the address dialled), and does not
// follow a redirect; the lax one reaches it.
func TestClientRefusesPrivateAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/in", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)

	_, err := Policy{}.Client().Get(srv.URL + "/in")
	if !errors.Is(err, ErrPrivateDestination) {
		t.Errorf("Policy{}.Client().Get(%s) = %v, want ErrPrivateDestination", srv.URL, err)
	}

	c := Policy{AllowPrivate: true}.Client()
	res, err := c.Get(srv.URL + "/in")
	if err != nil {
		t.Fatalf("Policy{AllowPrivate}.Client().Get(%s): %v", srv.URL, err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Errorf("Get(/in) = %d, want 204", res.StatusCode)
	}
	res, err = c.Get(srv.URL + "/moved")
	if err != nil {
		t.Fatalf("Get(/moved): %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound {
		t.Errorf("Get(/moved) = %d, want 302: redirects are not followed", res.StatusCode)
	}
}
