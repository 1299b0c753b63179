package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestCharsetOtherThanUTF8Refused wants 415 for a JSON body declared in
// another charset than UTF-8, and UTF-8 accepted however it is spelled.
func TestCharsetOtherThanUTF8Refused(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	body := map[string]any{"name": "a", "type": "private", "permissions": []string{"token:read"}}
	for _, ct := range []string{"application/json; charset=latin1", "application/json; charset=iso-8859-1", "application/json;charset=utf-16"} {
		r := s.do(t, "POST", "/applications", s.mgmt, body, "Content-Type", ct)
		wantStatus(t, "POST /applications as "+ct, r, http.StatusUnsupportedMediaType)
		r.problem(t)
	}
	for _, ct := range []string{"application/json; charset=utf-8", "application/json; charset=UTF-8", `application/json; charset="Utf-8"`, "application/json"} {
		r := s.do(t, "POST", "/applications", s.mgmt, body, "Content-Type", ct)
		wantStatus(t, "POST /applications as "+ct, r, http.StatusCreated)
	}
	r := s.do(t, "POST", "/applications", s.mgmt, body)
	var a tokenvault.Application
	r.json(t, &a)
	r = s.do(t, "PATCH", "/proxies/"+a.ID, s.mgmt, `{"name": "q"}`, "Content-Type", httpapi.MergePatchType+"; charset=latin1")
	wantStatus(t, "PATCH as merge-patch in latin1", r, http.StatusUnsupportedMediaType)
}

// TestSearchChecksPermissionFirstOverHTTP: a key without token:search gets
// 403 for a query it could not run, valid or not, not a 400 telling it how
// the query was read.
func TestSearchChecksPermissionFirstOverHTTP(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	_, reader := s.app(t, map[string]any{"name": "r", "type": "private", "permissions": []string{"token:read"}})
	for _, q := range []string{"nonsense", "colour:red", "data:x"} {
		r := s.do(t, "POST", "/tokens/search", reader, map[string]any{"query": q})
		wantStatus(t, "POST /tokens/search "+q+" without token:search", r, http.StatusForbidden)
		r.problem(t)
	}
}
