package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/oasdiff/yaml"
	"github.com/tokenvault/tokenvault/httpapi"
)

var update = flag.Bool("update", false, "rewrite openapi.json from openapi.yaml")

// TestOpenAPIJSONIsTheYAML: the JSON the handler serves is openapi.yaml,
// converted in the YAML's key order. With -update it rewrites
// openapi.json instead.
func TestOpenAPIJSONIsTheYAML(t *testing.T) {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ordered, err := yamlToOrderedJSON(src)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	// The ordered conversion is ours; hold it to a YAML library's.
	reference, err := yaml.YAMLToJSON(src)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	var want, got any
	if err := json.Unmarshal(reference, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ordered, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the ordered conversion differs from yaml.YAMLToJSON (-want +got):\n%s", diff)
	}
	if *update {
		if err := os.WriteFile("openapi.json", ordered, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(httpapi.OpenAPI(), ordered) {
		t.Errorf("openapi.json is not openapi.yaml; run go test ./httpapi -run TestOpenAPIJSON -update")
	}
}

// loadOpenAPI parses and validates the served document.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi: %s, want 3.1", doc.OpenAPI)
	}
	return doc
}

// TestOpenAPIRoutes: the document lists exactly the routes the handler
// serves, method by method. A wildcard {name...} is {name} in the document.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	var served []string
	for _, p := range httpapi.Routes(httpapi.New(nil, httpapi.Options{})) {
		served = append(served, strings.ReplaceAll(strings.ReplaceAll(p, "...}", "}"), "{$}", ""))
	}
	slices.Sort(documented)
	slices.Sort(served)
	if len(served) < 60 {
		t.Fatalf("only %d routes registered; the route list is broken", len(served))
	}
	for _, r := range served {
		if _, found := slices.BinarySearch(documented, r); !found {
			t.Errorf("served but not in openapi.yaml: %s", r)
		}
	}
	for _, r := range documented {
		if _, found := slices.BinarySearch(served, r); !found {
			t.Errorf("in openapi.yaml but not served: %s", r)
		}
	}
}

// TestOpenAPIServed: GET /openapi.json needs no key and answers the
// document.
func TestOpenAPIServed(t *testing.T) {
	s := newServer(t, httpapi.Options{})
	res := s.do(t, "GET", "/openapi.json", "", nil)
	wantStatus(t, "GET /openapi.json", res, http.StatusOK)
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !bytes.Equal(res.body, httpapi.OpenAPI()) {
		t.Error("the body is not the document")
	}
	loadOpenAPI(t)
}
