package unit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRecordWords pins recordWords: its entries are numbers in stored
// records.
func TestRecordWords(t *testing.T) {
	want := []string{"token", "card", "bank", "application", "user", "session", "system", "operator",
		"proxy", "reactor", "reactor_formula", "tenant", "tenant_member", "tenant_invitation",
		"create", "read", "update", "delete", "invoke",
		"/general/high/", "/pci/high/", "/bank/high/",
		"{{ data | stringify }}", "{{ data.number }}", "{{ data.account_number }}|{{ data.routing_number }}",
		"Token created", "Token read", "Token updated", "Token deleted", "Token expired",
		"Token read (deduplicated create)", "Token read (listed)", "Token read (searched)",
		"Token detokenized", "Token used by proxy", "Token used by reactor", "Card cvc removed (retention)"}
	if diff := cmp.Diff(want, recordWords[:]); diff != "" {
		t.Errorf("recordWords changed, which changes stored records (-want +got):\n%s", diff)
	}
}
