// Command tokenvault is the tokenvault server and operator command of the
// main module (github.com/tokenvault/tokenvault/cmd/tokenvault, whose
// documentation holds for it) with the cloud KMS kinds of root of trust
// of package cloudkms: -seal awskms, gcpckms, azurekeyvault or transit,
// and rotate-master-key -to each.
//
//	cd contrib/cloudkms && go build -o tokenvault ./cmd/tokenvault
//	./tokenvault -h                       # every flag, the kinds' among them
//	TOKENVAULT_TRANSIT_TOKEN=... ./tokenvault -seal transit \
//	    -transit-address https://vault.example.com:8200 -transit-key-name tokenvault
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	_ "github.com/tokenvault/tokenvault/contrib/cloudkms" // registers the kinds
	"github.com/tokenvault/tokenvault/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// As the main module's: a second signal ends the process at once.
		<-ctx.Done()
		stop()
	}()
	os.Exit(cli.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
