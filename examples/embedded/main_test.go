package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run() = %v", err)
	}
	want := `tenant "Acme" created, owner role OWNER
application "Checkout backend" (private) holds [token:create token:read token:use]
backend key listing applications: permission denied
old backend key after regenerate: unauthenticated
reactor says: hello Ada
reactor that never returns: code failed (timed out)
application log lines: 4
  create Application "Management" created
  create Application "Checkout backend" created
  denied Vault.ListApplications denied (403) from in process: the key lacks the permission application:read
  update Application key regenerated
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("run() output mismatch (-want +got):\n%s", diff)
	}
}
