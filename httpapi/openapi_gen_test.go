package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	yaml3 "github.com/oasdiff/yaml3"
)

// yamlToOrderedJSON converts a YAML document to JSON keeping the order of
// its keys, so the served document reads like the YAML (openapi, info,
// paths, components). Merge keys (<<) are expanded where they stand, with
// the mapping's own keys taking precedence, as YAML defines them.
func yamlToOrderedJSON(src []byte) ([]byte, error) {
	var doc yaml3.Node
	if err := yaml3.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeNode(&buf, &doc); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeNode(buf *bytes.Buffer, n *yaml3.Node) error {
	switch n.Kind {
	case yaml3.DocumentNode:
		return writeNode(buf, n.Content[0])
	case yaml3.AliasNode:
		return writeNode(buf, n.Alias)
	case yaml3.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeNode(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml3.MappingNode:
		buf.WriteByte('{')
		for i, kv := range mappingPairs(n) {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, kv[0].Value); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeNode(buf, kv[1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml3.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return err
		}
		if err := writeJSON(buf, v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		return nil
	}
	return fmt.Errorf("line %d: unexpected YAML node kind %v", n.Line, n.Kind)
}

// mappingPairs lists a mapping's key and value nodes in order, merge keys
// expanded in place; a key given twice keeps its first value, and the
// mapping's own keys win over merged ones.
func mappingPairs(n *yaml3.Node) [][2]*yaml3.Node {
	own := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "<<" {
			own[k] = true
		}
	}
	var out [][2]*yaml3.Node
	seen := map[string]bool{}
	add := func(k, v *yaml3.Node) {
		if !seen[k.Value] {
			seen[k.Value] = true
			out = append(out, [2]*yaml3.Node{k, v})
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "<<" {
			add(k, v)
			continue
		}
		merged := []*yaml3.Node{v}
		if v.Kind == yaml3.SequenceNode {
			merged = v.Content
		}
		for _, m := range merged {
			if m.Kind == yaml3.AliasNode {
				m = m.Alias
			}
			for _, kv := range mappingPairs(m) {
				if !own[kv[0].Value] {
					add(kv[0], kv[1])
				}
			}
		}
	}
	return out
}

// writeJSON writes v without escaping <, > and &, which the document's
// prose holds.
func writeJSON(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

// TestOpenAPIYAMLIsPlain: openapi.yaml uses no anchors, aliases or merge
// keys (<<). Tools such as swagger-parser read the YAML itself and refuse
// merge keys; repeat the text or use $ref instead.
func TestOpenAPIYAMLIsPlain(t *testing.T) {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml3.Node
	if err := yaml3.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml3.Node)
	walk = func(n *yaml3.Node) {
		switch {
		case n.Kind == yaml3.AliasNode:
			t.Errorf("line %d: an alias (*%s)", n.Line, n.Value)
		case n.Anchor != "":
			t.Errorf("line %d: an anchor (&%s)", n.Line, n.Anchor)
		case n.Kind == yaml3.ScalarNode && n.Value == "<<" && n.Tag == "!!merge":
			t.Errorf("line %d: a merge key (<<)", n.Line)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
}
