package vaulttest

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/store"
)

// PendingEntries counts the index entries of sessions waiting for
// authorization in s: per application, and per application and address.
func PendingEntries(t *testing.T, s store.Store) (perApp, perAddress int) {
	t.Helper()
	for k := range Dump(t, s) {
		switch {
		case strings.Contains(k, "/idx/pending-session/"):
			perApp++
		case strings.Contains(k, "/idx/pending-session-addr/"):
			perAddress++
		}
	}
	return perApp, perAddress
}
