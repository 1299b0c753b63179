package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// A target is one GOOS/GOARCH pair.
type target struct{ OS, Arch string }

func (t target) String() string { return t.OS + "/" + t.Arch }

// binaryName is the file a target's binary is written to in the output
// directory (the Containerfile copies tokenvault-linux-<arch>).
func (t target) binaryName() string { return "tokenvault-" + t.OS + "-" + t.Arch }

// defaultTargets are the platforms of a release.
var defaultTargets = []string{"linux/amd64", "linux/arm64", "darwin/arm64"}

// mainPackage is what a release builds.
const mainPackage = "./cmd/tokenvault"

// stampPackage holds the variables -X sets (internal/cli/version.go).
const stampPackage = "github.com/tokenvault/tokenvault/internal/cli"

// parseTargets reads -targets: os/arch pairs, or host.
func parseTargets(s string) ([]target, error) {
	var list []target
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "host" {
			part = runtime.GOOS + "/" + runtime.GOARCH
		}
		goos, goarch, ok := strings.Cut(part, "/")
		if !ok || goos == "" || goarch == "" {
			return nil, fmt.Errorf("-targets: %q is not os/arch (such as linux/amd64) or host", part)
		}
		t := target{goos, goarch}
		if !hasTarget(list, t) {
			list = append(list, t)
		}
	}
	return list, nil
}

func hasTarget(list []target, t target) bool { return slices.Contains(list, t) }

// hasLinux says whether list has a linux target, which the Containerfile
// can package.
func hasLinux(list []target) bool {
	return slices.ContainsFunc(list, func(t target) bool { return t.OS == "linux" })
}

// ldflags are the linker flags of a release: no symbol table or DWARF
// (smaller; panics still print their stacks), no build ID (the same source
// gives the same bytes), and the stamp.
func ldflags(s stamp) string {
	flags := []string{"-s", "-w", "-buildid="}
	for _, v := range []struct{ name, value string }{{"stampVersion", s.Version}, {"stampRevision", s.Revision}, {"stampCommitted", s.Committed}} {
		if v.value != "" {
			// -X takes the rest of its argument as the value; the go
			// command splits -ldflags on spaces unless quoted.
			flags = append(flags, fmt.Sprintf("-X '%s.%s=%s'", stampPackage, v.name, v.value))
		}
	}
	return strings.Join(flags, " ")
}

// buildAll builds every target from the module in dir into out and
// returns the files written, in order. Builds run one after the other:
// the go command already uses every CPU for one.
func buildAll(ctx context.Context, dir, out string, targets []target, s stamp, log io.Writer) ([]string, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, t := range targets {
		name := t.binaryName()
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags(s), "-o", filepath.Join(absOut, name), mainPackage)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building %s: %w", t, err)
		}
		fmt.Fprintf(log, "%s/%s\n", out, name)
		files = append(files, name)
	}
	return files, nil
}

// writeSums writes out/SHA256SUMS for files (names in out), in the format
// sha256sum -c checks: the hex digest, two spaces, the name.
func writeSums(out string, files []string) error {
	var b strings.Builder
	for _, name := range files {
		sum, err := fileSHA256(filepath.Join(out, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(b.String()), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
