package httpapi

import (
	_ "embed"
	"net/http"
	"strconv"
)

// openapiJSON is openapi.yaml as JSON. The YAML is the source people edit
// and review; the JSON is what the handler serves, generated from it so
// the library needs no YAML parser at run time. A test fails when the two
// differ; `go test ./httpapi -run TestOpenAPIJSON -update` regenerates it.
//
//go:embed openapi.json
var openapiJSON []byte

// OpenAPI returns the OpenAPI 3.1 document of the REST interface, as JSON:
// every route, parameter, request and response schema, the problem+json
// error schema and the security schemes. The handler serves it at
// GET /openapi.json without a key.
func OpenAPI() []byte { return append([]byte(nil), openapiJSON...) }

func (a *api) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(openapiJSON)))
	w.Write(openapiJSON)
}
