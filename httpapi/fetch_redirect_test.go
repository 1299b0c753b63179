package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// TestFetchRedirectModesOverHTTP: through POST /reactors/{id}/react, a
// fetch with redirect: "error" rejects on a 3xx, "manual" (and the
// default) resolve with it, and the redirect is never followed.
func TestFetchRedirectModesOverHTTP(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpapi.Options{})
	var followed atomic.Int32
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Add(1)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusMovedPermanently)
	}))
	defer dest.Close()
	_, user := s.app(t, map[string]any{"name": "u", "type": "private", "permissions": []string{"token:use"}})
	r := s.do(t, "POST", "/reactors", s.mgmt, map[string]any{"name": "redirects", "code": `module.exports = async (req) => {
		const out = {};
		for (const mode of ["default", "manual", "error"]) {
			try {
				const r = await fetch(req.args.url, mode === "default" ? {} : {redirect: mode});
				out[mode] = "status " + r.status;
			} catch (e) {
				out[mode] = e instanceof TypeError ? "TypeError" : "other";
			}
		}
		return {raw: out};
	}`})
	wantStatus(t, "POST /reactors", r, http.StatusCreated)
	var re tokenvault.Reactor
	r.json(t, &re)
	r = s.do(t, "POST", "/reactors/"+re.ID+"/react", user, map[string]any{"args": map[string]any{"url": dest.URL + "/start"}})
	wantStatus(t, "POST /reactors/{id}/react", r, http.StatusOK)
	var out struct{ Raw map[string]string }
	r.json(t, &out)
	want := map[string]string{"default": "status 301", "manual": "status 301", "error": "TypeError"}
	if diff := cmp.Diff(want, out.Raw); diff != "" {
		t.Errorf("fetch of a redirect by mode (-want +got):\n%s", diff)
	}
	if n := followed.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times, want never", n)
	}
}
