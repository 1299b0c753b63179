package expr

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocListsFilters keeps the filter table in doc.go in step with the
// filters Parse accepts.
func TestDocListsFilters(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start, end := strings.Index(doc, "# Filters"), strings.Index(doc, "# Errors")
	if start < 0 || end < start {
		t.Fatal("doc.go has no # Filters section before # Errors")
	}
	table := doc[start:end]
	for name := range filters {
		row := regexp.MustCompile(`(?m)^//\t(\w+, )?` + name + `\b`)
		if !row.MatchString(table) {
			t.Errorf("doc.go does not list filter %s", name)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^//\t([a-z0-9_]+)(, ([a-z0-9_]+))?[: \[]`).FindAllStringSubmatch(table, -1) {
		for _, name := range []string{m[1], m[3]} {
			if name != "" && filters[name] == nil {
				t.Errorf("doc.go lists %s, which is not a filter", name)
			}
		}
	}
}
