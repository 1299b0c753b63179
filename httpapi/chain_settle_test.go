package httpapi_test

import (
	"context"
	"testing"
)

// settleChain has the Vault link every queued audit line now (signing the
// bootstrap tenant's chain links them first, on the only instance), so
// that a test counting a request's store reads does not count the
// background linker's. The linker still ticks (its lease, its backlog
// measured) during the counted request, a read or two when the request is
// slow: the tests that count reads do not run in parallel, whose load
// makes it slow (102 reads of a bound of 100 on a machine at load 18).
func (s *server) settleChain(t *testing.T) {
	t.Helper()
	if _, err := s.v.SignAuditChain(context.Background(), s.boot.Tenant.ID); err != nil {
		t.Fatal(err)
	}
}
