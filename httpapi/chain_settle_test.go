package httpapi_test

import (
	"context"
	"testing"
)

// settleChain has the Vault link every queued audit line now (signing the
// bootstrap tenant's chain links them first, on the only instance), so
// that a test counting a request's store reads does not count the
// background linker's.
func (s *server) settleChain(t *testing.T) {
	t.Helper()
	if _, err := s.v.SignAuditChain(context.Background(), s.boot.Tenant.ID); err != nil {
		t.Fatal(err)
	}
}
