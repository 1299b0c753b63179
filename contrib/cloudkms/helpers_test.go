package cloudkms

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/syncbuf"

	"github.com/tokenvault/tokenvault/internal/cli"
)

// syncBuffer collects a server's output from its goroutines.
type syncBuffer = syncbuf.Buffer

func envFunc(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// serve starts the server (cli.Serve) on dir with flags and returns its
// address and a stop function that waits for a clean shutdown.
func serve(t *testing.T, dir string, env map[string]string, flags ...string) (addr string, out *syncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	out = &syncBuffer{}
	args := append([]string{"-addr", "127.0.0.1:0", "-data", dir, "-metrics=false"}, flags...)
	go func() { done <- cli.Serve(ctx, args, envFunc(env), out, ready) }()
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("server stopped: %v\n%s", err, out)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	return addr, out, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server shutdown: %v", err)
		}
	}
}

// runCLI runs the tokenvault command (cli.Main) with args.
func runCLI(env map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errOut syncBuffer
	code = cli.Main(context.Background(), args, envFunc(env), &out, &errOut)
	return code, out.String(), errOut.String()
}

func call(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("SVC-API-KEY", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// tokenizeOne creates, with the management key of dir, an application
// that may create and reveal tokens, tokenizes value with it, and returns
// the application's key and the token's id.
func tokenizeOne(t *testing.T, addr, dir, value string) (app, id string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "management.key"))
	if err != nil {
		t.Fatal(err)
	}
	status, body := call(t, "POST", "http://"+addr+"/applications", strings.TrimSpace(string(b)),
		`{"name":"kms","type":"private","rules":[{"priority":1,"container":"/","transform":"reveal","permissions":["token:create","token:read"]}]}`)
	var a struct{ Key string }
	if err := json.Unmarshal([]byte(body), &a); status != http.StatusCreated || err != nil || a.Key == "" {
		t.Fatalf("POST /applications = %d %s", status, body)
	}
	v, _ := json.Marshal(map[string]string{"v": value})
	status, body = call(t, "POST", "http://"+addr+"/tokenize", a.Key, string(v))
	var tok struct{ V string }
	if err := json.Unmarshal([]byte(body), &tok); status != http.StatusCreated || err != nil || tok.V == "" {
		t.Fatalf("POST /tokenize = %d %s", status, body)
	}
	return a.Key, tok.V
}

// readBack starts the server on dir with flags and reads the token id with
// app: it must hold value.
func readBack(t *testing.T, dir string, env map[string]string, flags []string, app, id, value string) {
	t.Helper()
	addr, _, stop := serve(t, dir, env, flags...)
	defer stop()
	if status, body := call(t, "GET", "http://"+addr+"/tokens/"+id, app, ""); status != http.StatusOK || !strings.Contains(body, value) {
		t.Fatalf("GET /tokens/{id} with %v = %d %s, want %q", flags, status, body, value)
	}
}

// snapshot returns every file under dir with its contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
