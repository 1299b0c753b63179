package openapitest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// exchange checks one made-up exchange against the document, as Mount
// checks the handler's, and returns what check says of it.
func exchange(t *testing.T, method, target, route, reqType, reqBody string, status int, respType, respBody string) error {
	t.Helper()
	d, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(method, target, strings.NewReader(reqBody))
	if reqType != "" {
		r.Header.Set("Content-Type", reqType)
	}
	rec := &recorder{ResponseWriter: httptest.NewRecorder()}
	if respType != "" {
		rec.Header().Set("Content-Type", respType)
	}
	rec.WriteHeader(status)
	rec.Write([]byte(respBody))
	return check(d, r, []byte(reqBody), route, rec, nil)
}

// TestBodiesHeldToTheirSchemas: the bodies Mount validates with the
// schemas it compiles once (bodySchemas) are held to them: a body of the
// wrong shape, in a request or a response, reached through the
// document's $refs or not, and a content type the document does not give
// fail; what the document allows passes.
func TestBodiesHeldToTheirSchemas(t *testing.T) {
	const id = "0193f1d2-0000-7000-8000-000000000001"
	token := `{"id":"` + id + `","type":"token","tenant_id":"` + id + `","containers":["/general/high/"],"created_at":"2026-11-29T18:00:00Z","created_by":"` + id + `"}`
	for _, tc := range []struct {
		name                     string
		method, target, route    string
		reqType, reqBody         string
		status                   int
		respType, respBody, want string // want: "" passes, else a part of the error
	}{
		{"a token", "GET", "/tokens/" + id, "/tokens/{id}", "", "", 200, "application/json", token, ""},
		{"a token's id of the wrong type", "GET", "/tokens/" + id, "/tokens/{id}", "", "", 200, "application/json", strings.Replace(token, `"`+id+`"`, `5`, 1), "response body"},
		{"a token's date that is not one", "GET", "/tokens/" + id, "/tokens/{id}", "", "", 200, "application/json", strings.Replace(token, "2026-11-29T18:00:00Z", "yesterday", 1), "response body"},
		{"a token as HTML", "GET", "/tokens/" + id, "/tokens/{id}", "", "", 200, "text/html", "<p>", "Content-Type"},
		{"a problem (a $ref'd response)", "GET", "/tokens/" + id, "/tokens/{id}", "", "", 404, "application/problem+json", `{"type":"about:blank","title":"Not Found","status":404}`, ""},
		{"a problem without its status", "GET", "/tokens/" + id, "/tokens/{id}", "", "", 404, "application/problem+json", `{"type":"about:blank","title":"Not Found"}`, "response body"},
		{"a reactor's own answer (*/*)", "POST", "/reactors/" + id + "/react", "/reactors/{id}/react", "application/json", `{}`, 418, "application/json", `{"brew":false}`, ""},
		{"a request body of the wrong shape", "POST", "/tokens", "/tokens", "application/json", `{"type":5}`, 201, "application/json", token, "request body"},
		{"a request body as text", "POST", "/tokens", "/tokens", "text/plain", `hello`, 201, "application/json", token, "request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := exchange(t, tc.method, tc.target, tc.route, tc.reqType, tc.reqBody, tc.status, tc.respType, tc.respBody)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("passed; want an error about the %s", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q; want one about the %s", err, tc.want)
			}
		})
	}
}

var _ http.ResponseWriter = (*recorder)(nil)
