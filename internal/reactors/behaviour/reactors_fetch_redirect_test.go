package reactors_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// redirectServer answers 302 to /elsewhere on every path but /elsewhere,
// and counts the calls that reached /elsewhere.
func redirectServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var followed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Add(1)
			w.Write([]byte("followed"))
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	return srv, &followed
}

// fetchRedirectModes fetches req.args.url with each redirect mode and
// returns, per mode, the status it resolved with or the message it was
// rejected with.
const fetchRedirectModes = `module.exports = async (req) => {
	const out = {};
	for (const mode of ["default", "follow", "manual", "error", "sideways"]) {
		try {
			const r = await fetch(req.args.url, mode === "default" ? {} : {redirect: mode});
			out[mode] = String(r.status);
		} catch (e) {
			out[mode] = e instanceof TypeError ? "TypeError: " + e.message : "other: " + String(e);
		}
	}
	return {raw: out};
}`

// wantRedirectModes checks what fetchRedirectModes returned.
func wantRedirectModes(t *testing.T, got any, followed *atomic.Int32) {
	t.Helper()
	m, _ := got.(map[string]any)
	want := map[string]any{"default": "302", "follow": "302", "manual": "302"}
	gotResolved := map[string]any{"default": m["default"], "follow": m["follow"], "manual": m["manual"]}
	if diff := cmp.Diff(want, gotResolved); diff != "" {
		t.Errorf("fetch of a redirect (-want +got):\n%s", diff)
	}
	if s, _ := m["error"].(string); !strings.HasPrefix(s, "TypeError: ") || !strings.Contains(s, "redirect") {
		t.Errorf(`fetch with redirect: "error" = %v, want a TypeError saying redirect`, m["error"])
	}
	if s, _ := m["sideways"].(string); !strings.HasPrefix(s, "TypeError: ") {
		t.Errorf(`fetch with redirect: "sideways" = %v, want a TypeError`, m["sideways"])
	}
	if n := followed.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times, want never", n)
	}
}

// TestFetchRedirectModes: redirect: "error" rejects on a 3xx, "manual" and
// "follow" resolve with it, and no redirect is ever followed.
// In sandbox workers and with Options.Code.TrustedInProcess.
func TestFetchRedirectModes(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("TrustedCodeInProcess=%v", inProcess), func(t *testing.T) {
			e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Code.TrustedInProcess = inProcess })
			srv, followed := redirectServer(t)
			got, err := invokeCode(t, e, fetchRedirectModes, map[string]any{"url": srv.URL + "/start"})
			if err != nil {
				t.Fatal(err)
			}
			wantRedirectModes(t, got, followed)
		})
	}
}
