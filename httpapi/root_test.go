package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/httpapi"
)

// TestRootNamesTheConsole: GET / names the web console when
// Options.ConsolePath says one is served beside the API, and no console
// otherwise.
func TestRootNamesTheConsole(t *testing.T) {
	for _, path := range []string{"", "/console/"} {
		h := httpapi.New(nil, httpapi.Options{ConsolePath: path})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		var root map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &root); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("GET / = %d %s", rec.Code, rec.Body)
		}
		if root["console"] != path || path != "" && !strings.Contains(root["detail"], path) {
			t.Errorf("with ConsolePath %q, GET / = %s", path, rec.Body)
		}
	}
}
