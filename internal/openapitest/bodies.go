package openapitest

import (
	"bytes"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tokenvault/tokenvault/httpapi"
)

// bodySchemas validates JSON bodies against the document's schemas, each
// compiled once. kin-openapi validates an OpenAPI 3.1 body by compiling
// a JSON Schema validator for its schema on every call, which was a third
// of the CPU of the tests that mount the API through Mount; here the
// whole document is one JSON Schema resource (an OpenAPI 3.1 schema is a
// JSON Schema 2020-12 one, and its $refs point into the document), and a
// body's schema is compiled at its place in it, the first time it is met.
type bodySchemas struct {
	doc      any // the document, as jsonschema decodes JSON
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema // by JSON pointer
}

const documentURL = "mem:///openapi.json"

var (
	schemasOnce sync.Once
	schemas     *bodySchemas
	schemasErr  error
)

// loadBodySchemas returns the document's bodySchemas.
func loadBodySchemas() (*bodySchemas, error) {
	schemasOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(httpapi.OpenAPI()))
		if err != nil {
			schemasErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat() // date-time, email, uri, uuid: as kin-openapi asserts them
		if err := c.AddResource(documentURL, doc); err != nil {
			schemasErr = err
			return
		}
		schemas = &bodySchemas{doc: doc, compiler: c, compiled: map[string]*jsonschema.Schema{}}
	})
	return schemas, schemasErr
}

// isJSON reports whether a media type is JSON (application/json,
// application/problem+json, application/merge-patch+json).
func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasPrefix(mediaType, "application/") && strings.HasSuffix(mediaType, "+json")
}

// validate checks a JSON body against the schema found by following
// path from the document's root (through the $refs of the objects on
// the way: a response or request body kept under components). A place
// with no schema accepts any body.
func (b *bodySchemas) validate(body []byte, path ...string) error {
	ptr, found, err := b.locate(path)
	if err != nil || !found {
		return err
	}
	sch, err := b.schema(ptr)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	return sch.Validate(v)
}

// schema compiles the schema at ptr once.
func (b *bodySchemas) schema(ptr string) (*jsonschema.Schema, error) {
	b.mu.Lock() // a Compiler is not safe for concurrent use; a Schema is
	defer b.mu.Unlock()
	if s, ok := b.compiled[ptr]; ok {
		return s, nil
	}
	s, err := b.compiler.Compile(documentURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("schema at %s: %w", ptr, err)
	}
	b.compiled[ptr] = s
	return s, nil
}

// locate follows path from the root, through each object's "$ref" to
// another place of the document, and returns the JSON pointer it ends at;
// found is false when a step is missing.
func (b *bodySchemas) locate(path []string) (ptr string, found bool, err error) {
	node := b.doc
	var at []string
	for _, step := range path {
		for hops := 0; ; hops++ {
			obj, _ := node.(map[string]any)
			ref, isRef := obj["$ref"].(string)
			if !isRef {
				break
			}
			if hops > 8 || !strings.HasPrefix(ref, "#/") {
				return "", false, fmt.Errorf("reference %q at %s is not one to follow", ref, pointer(at))
			}
			at = nil
			node = b.doc
			for _, s := range strings.Split(ref[2:], "/") {
				s = strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
				if node, found = child(node, s); !found {
					return "", false, fmt.Errorf("reference %q leads nowhere", ref)
				}
				at = append(at, s)
			}
		}
		if node, found = child(node, step); !found {
			return "", false, nil
		}
		at = append(at, step)
	}
	return pointer(at), true, nil
}

func child(node any, step string) (any, bool) {
	switch n := node.(type) {
	case map[string]any:
		v, ok := n[step]
		return v, ok
	case []any:
		i, err := strconv.Atoi(step)
		if err != nil || i < 0 || i >= len(n) {
			return nil, false
		}
		return n[i], true
	}
	return nil, false
}

func pointer(steps []string) string {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	var sb strings.Builder
	for _, s := range steps {
		sb.WriteString("/")
		sb.WriteString(esc.Replace(s))
	}
	return sb.String()
}

// contentKey is the key of content that describes a body of media type
// mt: mt itself, else its type's wildcard (application/*), else */*, as
// kin-openapi chooses; "" when none does.
func contentKey(content openapi3.Content, mt string) string {
	typ, _, _ := strings.Cut(mt, "/")
	for _, key := range []string{mt, typ + "/*", "*/*"} {
		if content[key] != nil {
			return key
		}
	}
	return ""
}

// mediaType is a Content-Type header's media type, lower-cased, without
// its parameters ("" when there is none or it does not parse).
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return mt
}
