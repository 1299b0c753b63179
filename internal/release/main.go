// Command release builds Token Vault's release binaries: static
// (CGO_ENABLED=0), reproducible (-trimpath, no build ID), with the version,
// revision and commit time stamped with -ldflags -X so that
// `tokenvault version` says what it is even without VCS information, and
// their SHA-256 sums in SHA256SUMS (sha256sum -c reads it). It needs
// nothing but the Go toolchain (and git, for the default version).
//
//	go run ./internal/release                       # dist/tokenvault-{linux-amd64,linux-arm64,darwin-arm64}, dist/SHA256SUMS
//	go run ./internal/release -o out -targets linux/amd64
//	go run ./internal/release -version v1.2.0       # a version other than git describe's
//	go run ./internal/release -image tokenvault:dev # then the container image (Containerfile) with podman or docker
//
// The binaries have no cgo, so no PKCS#11 (-seal pkcs11 needs a cgo build:
// go build ./cmd/tokenvault on the machine with the HSM's library). The
// cloud KMS kinds are in contrib/cloudkms's own tokenvault, not here.
//
// With a linux target it also writes what the Containerfile copies besides
// the binary: <out>/ca-certificates.crt (the build machine's CA bundle, for
// outbound HTTPS: proxies, reactor fetch, webhooks, audit export, SMTP,
// PostgreSQL TLS) and an empty <out>/data directory (the image's /data).
// -image then builds the image, passing the version, revision and source
// as build arguments (the OCI labels).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: go run ./internal/release [flags]\n\nBuilds static tokenvault binaries with the version stamped, and SHA256SUMS.")
		fs.PrintDefaults()
	}
	out := fs.String("o", "dist", "output `directory` (created; its tokenvault-* files and SHA256SUMS are replaced)")
	targets := fs.String("targets", strings.Join(defaultTargets, ","), "comma-separated `os/arch` list (host: this machine's)")
	version := fs.String("version", "", "the `version` to stamp (default: git describe --tags --dirty, or devel-<commit>)")
	revision := fs.String("revision", "", "the `commit` to stamp (default: git rev-parse HEAD, with -modified if the tree has changes)")
	committed := fs.String("committed", "", "the commit `time` to stamp, RFC 3339 (default: git's commit time of HEAD)")
	image := fs.String("image", "", "then build the container image with this `name:tag` (podman, else docker) from the linux binary of this machine's architecture")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	list, err := parseTargets(*targets)
	if err != nil {
		return err
	}
	s, err := readStamp(ctx, ".", stamp{Version: *version, Revision: *revision, Committed: *committed})
	if err != nil {
		return err
	}
	if *image != "" && !hasTarget(list, target{"linux", runtime.GOARCH}) {
		return fmt.Errorf("-image needs linux/%s in -targets (the image packages this machine's architecture)", runtime.GOARCH)
	}
	fmt.Printf("tokenvault %s, revision %s\n", s.Version, s.Revision)
	files, err := buildAll(ctx, ".", *out, list, s, os.Stdout)
	if err != nil {
		return err
	}
	if err := writeSums(*out, files); err != nil {
		return err
	}
	fmt.Printf("%s/SHA256SUMS\n", *out)
	if !hasLinux(list) {
		return nil
	}
	// What the Containerfile copies besides the binary, for -image and
	// for a podman or docker build by hand.
	if err := stageImage(*out); err != nil {
		if *image != "" {
			return err
		}
		fmt.Printf("not staged for the Containerfile: %v\n", err)
		return nil
	}
	fmt.Printf("%s/ca-certificates.crt, %s/data/ (for the Containerfile)\n", *out, *out)
	if *image == "" {
		return nil
	}
	if err := buildImage(ctx, *out, *image, s, os.Stdout); err != nil {
		return errors.Join(errors.New("the image"), err)
	}
	return nil
}
