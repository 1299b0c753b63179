package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// source is the image's org.opencontainers.image.source label.
const source = "https://github.com/tokenvault/tokenvault"

// caBundles are where Linux distributions keep the CA bundle, in order.
var caBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Alpine, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL
	"/etc/ssl/ca-bundle.pem",             // openSUSE
	"/etc/ssl/cert.pem",                  // macOS, BSDs
}

// stageImage writes what the Containerfile copies from out besides the
// binary: the CA bundle and an empty data directory (COPY of it makes
// /data, owned by the image's user: an image built without RUN has no
// other way to make a directory).
func stageImage(out string) error {
	var bundle []byte
	for _, p := range caBundles {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			bundle = b
			break
		}
	}
	if bundle == nil {
		return fmt.Errorf("no CA bundle on this machine (looked at %s): install ca-certificates; the image needs it for outbound HTTPS", strings.Join(caBundles, ", "))
	}
	if err := os.WriteFile(filepath.Join(out, "ca-certificates.crt"), bundle, 0o644); err != nil {
		return err
	}
	data := filepath.Join(out, "data")
	if err := os.RemoveAll(data); err != nil {
		return err
	}
	return os.Mkdir(data, 0o700)
}

// containerTool is podman, else docker.
func containerTool() (string, error) {
	for _, name := range []string{"podman", "docker"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("neither podman nor docker is installed")
}

// buildImage builds, once stageImage has run, the Containerfile at the module's root (the build
// context; out must be dist or under it, as .containerignore lets only
// those in) into the image name, from out's
// linux binary of this machine's architecture.
func buildImage(ctx context.Context, out, name string, s stamp, log io.Writer) error {
	rel := filepath.ToSlash(filepath.Clean(out))
	if rel != "dist" && !strings.HasPrefix(rel, "dist/") {
		return fmt.Errorf("-o %s: with -image, the output directory must be dist or under it (the build context holds only dist/ and deploy/container/: .containerignore)", out)
	}
	tool, err := containerTool()
	if err != nil {
		return err
	}
	args := []string{"build", "-f", "Containerfile", "-t", name,
		"--build-arg", "DIST=" + rel,
		"--build-arg", "TARGETARCH=" + runtime.GOARCH,
		"--build-arg", "VERSION=" + s.Version,
		"--build-arg", "REVISION=" + s.Revision,
		"--build-arg", "CREATED=" + s.Committed,
		"--build-arg", "SOURCE=" + source,
		"."}
	fmt.Fprintf(log, "%s %s\n", filepath.Base(tool), strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Stdout, cmd.Stderr = log, log
	return cmd.Run()
}
