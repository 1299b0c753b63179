package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/httpapi"
)

// TestDecodeErrorsDoNotEchoInput: a bad date or an overflowing number is
// described, never quoted back.
func TestDecodeErrorsDoNotEchoInput(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	for _, body := range []string{
		`{"name": "a", "type": "private", "expires_at": "secret-4242424242424242"}`,
		`{"name": "a", "type": "private", "expires_at": 99999999999999999999999}`,
	} {
		r := s.do(t, "POST", "/applications", s.mgmt, body)
		wantStatus(t, "POST /applications "+body, r, http.StatusBadRequest)
		r.problem(t)
		if strings.Contains(string(r.body), "4242424242") || strings.Contains(string(r.body), "9999999999") {
			t.Errorf("the problem quotes the input: %s", r.body)
		}
	}
}
