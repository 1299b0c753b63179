package events_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestWebhookDocsNameTheCatalogue: docs/webhooks.md has a row for every
// event type of the catalogue, and names no type that is not in it.
func TestWebhookDocsNameTheCatalogue(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(vaulttest.RepoRoot(t), "docs", "webhooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	known := map[string]bool{}
	for _, et := range tokenvault.WebhookEventTypes() {
		known[et.Name] = true
		if !strings.Contains(doc, "| `"+et.Name+"` |") {
			t.Errorf("docs/webhooks.md has no catalogue row for %s", et.Name)
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ = strings.Cut(name, "`")
			if strings.Contains(name, ".") && !known[name] {
				t.Errorf("docs/webhooks.md lists %s, which is not in the catalogue", name)
			}
		}
	}
}
