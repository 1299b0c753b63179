// Command embedded shows Token Vault used in-process: no HTTP, the same
// keys and permissions. It keeps its data in memory and prints what it does.
//
//	go run ./examples/embedded
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/memory"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// A real program keeps its master key in a secret manager or a file.
	masterKey := make([]byte, 32)
	rand.Read(masterKey)
	// Tenant code (reactors, proxy transforms) runs in sandbox worker
	// processes: this very program started again in worker mode, which
	// importing tokenvault arranges; nothing else is needed here.
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: masterKey}, Code: tokenvault.CodeOptions{Timeout: 2 * time.Second}})
	if err != nil {
		return err
	}
	defer v.Close()

	// Bootstrap: a tenant, its owner, and a management key.
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{
		Name:  "Acme",
		Owner: tokenvault.User{Email: "owner@acme.example"},
	})
	if err != nil {
		return err
	}
	mgmt := boot.Application.Key
	fmt.Fprintf(out, "tenant %q created, owner role %s\n", boot.Tenant.Name, boot.Owner.Role)

	// The management key creates a backend application.
	backend, err := v.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{
		Name:        "Checkout backend",
		Type:        tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenUse},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "application %q (%s) holds %v\n", backend.Name, backend.Type, backend.Permissions)

	// The backend key may not manage applications: the Vault says so.
	_, err = v.ListApplications(ctx, backend.Key, tokenvault.ListApplicationsRequest{})
	fmt.Fprintf(out, "backend key listing applications: %v\n", tokenvault.ErrorKind(err))

	// Regenerating a key refuses the old one at once.
	regenerated, err := v.RegenerateApplicationKey(ctx, mgmt, backend.ID)
	if err != nil {
		return err
	}
	_, err = v.GetApplicationByKey(ctx, backend.Key)
	fmt.Fprintf(out, "old backend key after regenerate: %v\n", tokenvault.ErrorKind(err))

	// A reactor runs in a worker process; one that never ends is stopped
	// there, and only its own invocation fails.
	greeter, err := v.CreateReactor(ctx, mgmt, tokenvault.CreateReactorRequest{
		Name: "Greeter", Code: `module.exports = async (req) => ({raw: "hello " + req.args.name})`,
	})
	if err != nil {
		return err
	}
	res, err := v.InvokeReactor(ctx, regenerated.Key, greeter.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"name": "Ada"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "reactor says: %v\n", res.Raw)
	spinner, err := v.CreateReactor(ctx, mgmt, tokenvault.CreateReactorRequest{
		Name: "Spinner", Code: `module.exports = async () => { while (true) {} }`,
	})
	if err != nil {
		return err
	}
	_, err = v.InvokeReactor(ctx, regenerated.Key, spinner.ID, tokenvault.InvokeReactorRequest{})
	var e *tokenvault.Error
	if errors.As(err, &e) {
		fmt.Fprintf(out, "reactor that never returns: %v (%v)\n", e.Kind, e.Stop)
	}

	// Every change is in the audit log.
	logs, err := v.ListLogs(ctx, mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityApplication})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "application log lines: %d\n", logs.Pagination.TotalItems)
	for i := len(logs.Data) - 1; i >= 0; i-- {
		fmt.Fprintf(out, "  %s %s\n", logs.Data[i].Operation, logs.Data[i].Message)
	}
	return nil
}
