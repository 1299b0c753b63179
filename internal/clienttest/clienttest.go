// Package clienttest serves a real Vault over HTTP for the test suites of
// the clients in other languages (clients/typescript, clients/python),
// and runs those suites as child processes of a Go test: go test ./...
// runs them, each against a server of its own on a port the system
// chose, so no two suites, and no suite and another test, share a port,
// a file or a tenant.
//
// The server is httpapi over a Vault on a memory store, with every
// request the handler accepts and every answer held to the OpenAPI
// document (internal/openapitest): a client that sends what the document
// does not describe fails its Go test.
//
// A suite learns where the server is from its environment:
//
//	TOKENVAULT_URL             the API's base URL (no trailing slash)
//	TOKENVAULT_MANAGEMENT_KEY  the bootstrap management key of tenant "Acme"
//	TOKENVAULT_OPERATOR_KEY    the operator key (tenants, operator routes)
//	TOKENVAULT_ECHO_URL        a proxy destination that answers with what it got
//	TOKENVAULT_OPENAPI         the path of httpapi/openapi.json
package clienttest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/openapitest"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// OperatorKey is the operator key the server takes.
const OperatorKey = "op_clienttest-operator-key-0123456789"

// Server is a Vault served over HTTP for one client suite.
type Server struct {
	URL           string // base URL of the API
	ManagementKey string // bootstrap management key of tenant "Acme"
	EchoURL       string // proxy destination echoing the request
	Env           *vaulttest.Env
	Mailer        *testfake.Mailer
	Coverage      *openapitest.Coverage
}

// Start serves a new Vault until t ends.
func Start(t *testing.T) *Server {
	t.Helper()
	box := &testfake.Mailer{}
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) {
		o.Now = time.Now // real time: clients test expiries and Retry-After
		o.Mailer = box
	})
	cov := new(openapitest.Coverage)
	srv := httptest.NewServer(openapitest.Mount(t, e.V, httpapi.Options{OperatorKey: OperatorKey}, cov))
	t.Cleanup(srv.Close)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if len(b) == 0 {
			b = []byte(`{}`)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(echo.Close)
	return &Server{URL: srv.URL, ManagementKey: string(e.Mgmt), EchoURL: echo.URL, Env: e, Mailer: box, Coverage: cov}
}

// Need returns the path of program, or skips t when it is missing; under
// CI=true a missing program fails t (.ci/run installs it).
func Need(t *testing.T, program string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (CI installs it: see .ci/run)", program)
	}
	t.Skipf("%s is not installed: the client's tests are skipped", program)
	return ""
}

// Run runs a command in dir with the server's environment, its output
// going to the test's output, and fails t if it fails or runs longer
// than five minutes.
func (s *Server) Run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"TOKENVAULT_URL="+s.URL,
		"TOKENVAULT_MANAGEMENT_KEY="+s.ManagementKey,
		"TOKENVAULT_OPERATOR_KEY="+OperatorKey,
		"TOKENVAULT_ECHO_URL="+s.EchoURL,
		"TOKENVAULT_OPENAPI="+filepath.Join(vaulttest.RepoRoot(t), "httpapi", "openapi.json"),
	)
	cmd.Stdout = t.Output()
	cmd.Stderr = t.Output()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v in %s: %v", name, args, dir, err)
	}
}
