package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPortInUseWritesNothing: serve on an address another listener holds
// fails naming -addr and TOKENVAULT_ADDR, before it creates the data
// directory, a master key, a tenant or a key file, and prints nothing on
// stdout (no key banner, no log line but none).
func TestPortInUseWritesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "data")
	code, out, errOut := runCLI(t, nil, "serve", "-addr", ln.Addr().String(), "-data", dir)
	if code != 1 || !strings.Contains(errOut, "-addr") || !strings.Contains(errOut, "TOKENVAULT_ADDR") || !strings.Contains(errOut, "already in use") {
		t.Errorf("serve on a taken port = %d %q, want 1 naming -addr and TOKENVAULT_ADDR", code, errOut)
	}
	if out != "" || strings.Contains(errOut, "Created tenant") {
		t.Errorf("serve on a taken port printed %q (stderr %q)", out, errOut)
	}
	if entries, err := os.ReadDir(dir); !os.IsNotExist(err) {
		t.Errorf("serve on a taken port made the data directory: %v %v", entries, err)
	}

	// The same with a data directory that has a store: nothing in it changes.
	_, _, stop := start(t, dir, nil)
	stop()
	before := dirListing(t, dir)
	if code, _, errOut := runCLI(t, nil, "-addr", ln.Addr().String(), "-data", dir); code != 1 || !strings.Contains(errOut, "-addr") {
		t.Errorf("second serve on a taken port = %d %q", code, errOut)
	}
	if after := dirListing(t, dir); after != before {
		t.Errorf("the data directory changed:\n%s\nto\n%s", before, after)
	}
}

// dirListing is the names, sizes and times of dir's files.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Name() + " " + fi.ModTime().String() + "\n")
	}
	return b.String()
}

// TestSecondServerOnOneDataDirectory: a second serve on a data directory a
// running server holds fails within seconds, saying one is already running
// there and naming -data; the first keeps serving.
func TestSecondServerOnOneDataDirectory(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	defer stop()
	began := time.Now()
	code, _, errOut := runCLI(t, nil, "-addr", "127.0.0.1:0", "-data", dir)
	if code != 1 || !strings.Contains(errOut, "already running on the data directory "+dir) || !strings.Contains(errOut, "-data") {
		t.Errorf("a second server on %s = %d %q, want a failure saying one is already running there", dir, code, errOut)
	}
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("the second server took %v to fail", d)
	}
	// rotate-master-key on a running server's directory says the same.
	if code, _, errOut := runCLI(t, nil, "rotate-master-key", "-data", dir); code != 1 || !strings.Contains(errOut, "already running") {
		t.Errorf("rotate-master-key on a running server's directory = %d %q", code, errOut)
	}
	if status, _ := get(t, "http://"+addr+"/healthz", ""); status != 200 {
		t.Errorf("the first server: /healthz = %d", status)
	}
}

// TestRestoredDataDirectoryNamesNoMissingKeyFile: a server started on a
// restored data directory (no management.key: a backup holds none) does
// not log a key file that is not there, and says what is true.
func TestRestoredDataDirectoryNamesNoMissingKeyFile(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	backup := filepath.Join(t.TempDir(), "vault.backup")
	env := map[string]string{"TOKENVAULT_SERVER": "http://" + addr}
	if code, out, errOut := runCLI(t, env, "backup", "-operator-key-file", filepath.Join(dir, "operator.key"), "-o", backup); code != 0 {
		t.Fatalf("backup = %d %q %q", code, out, errOut)
	}
	stop()
	restored := filepath.Join(t.TempDir(), "restored")
	if code, out, errOut := runCLI(t, nil, "restore", "-i", backup, "-data", restored, "-master-key-file", filepath.Join(dir, "master.key")); code != 0 {
		t.Fatalf("restore = %d %q %q", code, out, errOut)
	}
	_, out, errOut, stop := startCapturing(t, restored, nil)
	stop()
	missing := filepath.Join(restored, "management.key")
	if strings.Contains(out.String(), missing) || strings.Contains(errOut.String(), missing) {
		t.Errorf("the server names %s, which does not exist:\n%s%s", missing, out, errOut)
	}
	if !strings.Contains(out.String(), "no management.key in this data directory") {
		t.Errorf("the log does not say there is no management key file:\n%s", out)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("%s: %v", missing, err)
	}
}
