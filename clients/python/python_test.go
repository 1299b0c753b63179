// Package python_test runs the Python client's test suite (clients/python,
// python3 -m unittest) against a real server served by internal/clienttest.
package python_test

import (
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault/internal/clienttest"
)

// exercised are operations the suite must have called with success against
// the server: were its live tests skipped (no TOKENVAULT_URL), this test
// fails rather than passing on the unit tests alone.
var exercised = []string{
	"tokenize", "detokenize", "createToken", "getToken", "updateToken", "deleteToken",
	"listTokens", "searchTokens", "createApplication", "getApplication", "updateApplication",
	"listApplications", "deleteApplication", "createTokenIntent", "createProxy",
	"invokeProxyPathPost", "createWebhook", "listWebhooks", "operatorListTenants",
	"setApprovalPolicy", "approveChange",
}

// TestPythonClient runs the suite with python3 -B, so that no run writes
// __pycache__ into the source tree and concurrent runs share no file. A
// missing python3, or one older than 3.10, skips it (fails under CI=true).
func TestPythonClient(t *testing.T) {
	python := clienttest.Need(t, "python3")
	if err := exec.Command(python, "-c", "import sys; sys.exit(sys.version_info < (3, 10))").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is older than 3.10 (the client needs 3.10+): %v", python, err)
		}
		t.Skipf("%s is older than 3.10: the client's tests are skipped", python)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	s := clienttest.Start(t)
	t.Setenv("PYTHONDONTWRITEBYTECODE", "1")
	s.Run(t, dir, python, "-B", "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v")
	succeeded := s.Coverage.Succeeded()
	for _, op := range exercised {
		if !slices.Contains(succeeded, op) {
			t.Errorf("the suite never called %s with success against the server", op)
		}
	}
	t.Logf("the suite called %d of the API's operations with success", len(succeeded))
}
