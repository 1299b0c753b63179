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
	// With an operator key: without one, /operator/ is not mounted.
	for _, p := range httpapi.Routes(httpapi.New(nil, httpapi.Options{OperatorKey: "op_route-list-operator-key"})) {
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

// TestOpenAPIQueryParameters: each operation documents exactly the query
// parameters its route accepts (a route refuses any other with a 400). A
// prefix parameter (metadata.<key>) is named in the description, which
// OpenAPI parameters cannot express; proxy invocation takes any query.
func TestOpenAPIQueryParameters(t *testing.T) {
	doc := loadOpenAPI(t)
	h := httpapi.New(nil, httpapi.Options{})
	declared := httpapi.QueryParams(h)
	for _, pattern := range httpapi.Routes(h) {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.ReplaceAll(strings.ReplaceAll(path, "...}", "}"), "{$}", "")
		item := doc.Paths.Find(path)
		if item == nil {
			t.Errorf("%s: no path in the document", pattern)
			continue
		}
		op := item.GetOperation(method)
		var documented []string
		for _, p := range append(item.Parameters, op.Parameters...) {
			if p.Value.In == "query" {
				documented = append(documented, p.Value.Name)
			}
		}
		var want []string
		for _, name := range declared[pattern] {
			if name == "*" {
				want = nil
				documented = nil // any query: the document lists none of its own
				break
			}
			if prefix, ok := strings.CutSuffix(name, ".*"); ok {
				if !strings.Contains(op.Description, prefix+".<key>") {
					t.Errorf("%s: the description does not mention %s.<key>", pattern, prefix)
				}
				continue
			}
			want = append(want, name)
		}
		slices.Sort(want)
		slices.Sort(documented)
		if !slices.Equal(want, documented) {
			t.Errorf("%s: accepts the query parameters %v, the document lists %v", pattern, want, documented)
		}
	}
}
