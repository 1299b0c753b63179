package httpapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestEveryKindHasAStatus keeps the status table complete.
func TestEveryKindHasAStatus(t *testing.T) {
	seen := map[int]tokenvault.Kind{}
	for _, k := range tokenvault.Kinds() {
		s, ok := statusOf[k]
		if !ok {
			t.Errorf("kind %v has no HTTP status", k)
			continue
		}
		if k == tokenvault.CodeFailed {
			continue // its status is the one the code chose; 500 is only the fallback
		}
		if prev, dup := seen[s]; dup {
			t.Errorf("kinds %v and %v share status %d", prev, k, s)
		}
		seen[s] = k
	}
}

func TestInternalErrorsAreGeneric(t *testing.T) {
	a := New(nil, Options{}).(*api)
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/x", nil)
	a.writeError(w, r, &tokenvault.Error{Kind: tokenvault.Internal, Message: "disk on fire at /secret/path", Err: errors.New("boom")})
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "secret") || strings.Contains(w.Body.String(), "boom") {
		t.Errorf("internal error answered %d %s", w.Code, w.Body)
	}
}
