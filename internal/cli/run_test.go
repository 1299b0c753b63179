package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/syncbuf"
)

// syncBuffer collects a server's output from its goroutines.
type syncBuffer = syncbuf.Buffer

// start runs the server on a random port in dir and returns its address and
// a stop function that waits for a clean shutdown.
func start(t *testing.T, dir string, env map[string]string) (addr string, out *syncBuffer, stop func()) {
	t.Helper()
	return startWith(t, dir, env)
}

// startWith is start with more flags.
func startWith(t *testing.T, dir string, env map[string]string, flags ...string) (addr string, out *syncBuffer, stop func()) {
	t.Helper()
	addr, out, _, stop = startCapturing(t, dir, env, flags...)
	return addr, out, stop
}

// startCapturing is startWith that also returns what the server wrote to
// stderr (errOut).
func startCapturing(t *testing.T, dir string, env map[string]string, flags ...string) (addr string, out, errOut *syncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	out, errOut = &syncBuffer{}, &syncBuffer{}
	getenv := func(k string) string { return env[k] }
	args := append([]string{"-addr", "127.0.0.1:0", "-data", dir}, flags...)
	go func() { done <- run(ctx, args, getenv, out, errOut, ready) }()
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("server stopped: %v\n%s", err, out)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	return addr, out, errOut, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server shutdown: %v", err)
		}
	}
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("SVC-API-KEY", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestFirstRunBootstrapsAndRestartKeepsData: the first run writes the
// management key to <data>/management.key and says so on stderr, never in
// the log (stdout) nor, when stderr is not a terminal, on stderr; a second
// run keeps the data and prints nothing about a key.
func TestFirstRunBootstrapsAndRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	addr, out, errOut, stop := startCapturing(t, dir, nil)
	keyBytes, err := os.ReadFile(filepath.Join(dir, "management.key"))
	if err != nil {
		t.Fatalf("management.key: %v", err)
	}
	key := strings.TrimSpace(string(keyBytes))
	if strings.Contains(out.String(), key) || strings.Contains(out.String(), "Created tenant") {
		t.Errorf("the management key or its banner reached the log (stdout):\n%s", out)
	}
	keyFile := filepath.Join(dir, "management.key")
	if !strings.Contains(errOut.String(), "Created tenant") || !strings.Contains(errOut.String(), keyFile) || strings.Contains(errOut.String(), key) {
		t.Errorf("stderr (not a terminal) should name %s and not hold the key:\n%s", keyFile, errOut)
	}
	if !strings.Contains(out.String(), "key_file="+keyFile) {
		t.Errorf("the log does not name the key file:\n%s", out)
	}
	for _, f := range []string{"management.key", "master.key"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, %v; want 0600", f, fi.Mode().Perm(), err)
		}
	}
	if code, body := get(t, "http://"+addr+"/applications", key); code != 200 || !strings.Contains(body, "Management") {
		t.Errorf("GET /applications = %d %s", code, body)
	}
	stop()

	// A second run keeps the data and prints no new key.
	addr, out, stop = start(t, dir, nil)
	if code, body := get(t, "http://"+addr+"/applications", key); code != 200 {
		t.Errorf("GET /applications after restart = %d %s", code, body)
	}
	stop() // request lines are written in blocks: all of them by now
	if strings.Contains(out.String(), key) || strings.Contains(out.String(), "Created tenant") {
		t.Errorf("restart printed the key again:\n%s", out)
	}
	// Request logs hold no keys.
	if strings.Count(out.String(), "request") == 0 {
		t.Errorf("no request was logged:\n%s", out)
	}
}

func TestMasterKeyFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"TOKENVAULT_MASTER_KEY": strings.Repeat("ab", 32)}
	_, _, stop := start(t, dir, env)
	stop()
	if _, err := os.Stat(filepath.Join(dir, "master.key")); err == nil {
		t.Errorf("master.key written although TOKENVAULT_MASTER_KEY was set")
	}
	// Another key does not open the store, and says so without echoing it.
	env["TOKENVAULT_MASTER_KEY"] = strings.Repeat("cd", 32)
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", dir}, func(k string) string { return env[k] }, io.Discard, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "master key") || strings.Contains(err.Error(), "cdcd") {
		t.Errorf("run with the wrong master key = %v", err)
	}
	env["TOKENVAULT_MASTER_KEY"] = "not-hex"
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", dir}, func(k string) string { return env[k] }, io.Discard, io.Discard, nil)
	if err == nil || strings.Contains(err.Error(), "not-hex") {
		t.Errorf("run with a malformed master key = %v", err)
	}
}
