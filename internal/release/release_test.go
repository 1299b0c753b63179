package main

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestReleaseBuildStampsVersion builds this machine's target as a release
// does, then asks the binary its version: the stamped values come back
// though the build had no VCS information (-buildvcs=false), the binary is
// static on Linux, and SHA256SUMS holds its digest. About 3 s with the
// build cache warm (.ci/run builds the image first), 2 minutes cold on a
// shared 2-CPU machine.
func TestReleaseBuildStampsVersion(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	host := target{runtime.GOOS, runtime.GOARCH}
	s := stamp{Version: "v9.8.7-test", Revision: "0123456789abcdef0123456789abcdef01234567", Committed: "2026-01-02T03:04:05Z"}
	var log strings.Builder
	files, err := buildAll(ctx, "../..", out, []target{host}, s, &log)
	if err != nil {
		t.Fatalf("buildAll: %v\n%s", err, log.String())
	}
	if err := writeSums(out, files); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(out, host.binaryName())
	got, err := exec.CommandContext(ctx, bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, got)
	}
	for _, want := range []string{"tokenvault v9.8.7-test\n", "revision " + s.Revision + "\n", "committed " + s.Committed + "\n", "built with go"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("version printed %q, want a line %q", got, want)
		}
	}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := fileSHA256(bin)
	if err != nil {
		t.Fatal(err)
	}
	if want := sum + "  " + host.binaryName() + "\n"; string(sums) != want {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want)
	}
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s has a dynamic loader (PT_INTERP): not static", bin)
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			t.Errorf("%s needs shared libraries %v: not static", bin, libs)
		}
	}
}

func TestParseTargets(t *testing.T) {
	got, err := parseTargets("linux/amd64, darwin/arm64,linux/amd64,host")
	if err != nil {
		t.Fatal(err)
	}
	want := []target{{"linux", "amd64"}, {"darwin", "arm64"}}
	if h := (target{runtime.GOOS, runtime.GOARCH}); !hasTarget(want, h) {
		want = append(want, h)
	}
	if len(got) != len(want) {
		t.Fatalf("parseTargets = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("parseTargets[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"linux", "/amd64", "linux/", ""} {
		if _, err := parseTargets(bad); err == nil {
			t.Errorf("parseTargets(%q) = nil error", bad)
		}
	}
}

func TestReadStampRefusesQuotes(t *testing.T) {
	if _, err := readStamp(context.Background(), t.TempDir(), stamp{Version: "v1 x", Revision: "abc"}); err == nil {
		t.Error("a version with a space was accepted: -ldflags would split it")
	}
}
