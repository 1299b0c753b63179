package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodeMaxResultBytesFlag: -code-max-result-bytes and
// TOKENVAULT_CODE_MAX_RESULT_BYTES set the bound (the flag wins), 4 MiB by
// default; zero or less is refused.
func TestCodeMaxResultBytesFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want int64
	}{
		{nil, "", 4 << 20},
		{[]string{"-code-max-result-bytes", "65536"}, "", 65536},
		{nil, "1048576", 1 << 20},
		{[]string{"-code-max-result-bytes=1000"}, "2000", 1000},
	} {
		cfg, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_CODE_MAX_RESULT_BYTES": c.env}[k] })
		if err != nil || cfg.codeMaxResultBytes != c.want {
			t.Errorf("parseConfig(%q, TOKENVAULT_CODE_MAX_RESULT_BYTES=%q).codeMaxResultBytes = %v, %v; want %v", c.args, c.env, cfg.codeMaxResultBytes, err, c.want)
		}
	}
	for _, args := range [][]string{{"-code-max-result-bytes", "0"}, {"-code-max-result-bytes", "-1"}, {"-code-max-result-bytes", "4MiB"}} {
		if _, err := parseConfig(args, func(string) string { return "" }); err == nil {
			t.Errorf("parseConfig(%q) accepted", args)
		}
	}
}

// TestServerBoundsCodeResults: a server started with
// -code-max-result-bytes 65536 answers a reactor returning more with a 413
// problem naming 64 KiB, and one returning less with its result.
func TestServerBoundsCodeResults(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := startWith(t, dir, nil, "-code-max-result-bytes", "65536")
	defer stop()
	b, err := os.ReadFile(filepath.Join(dir, "management.key"))
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(b))
	call := func(method, path string, body any) (int, http.Header, []byte) {
		t.Helper()
		return callAs(t, addr, key, method, path, body)
	}
	status, _, out := call("POST", "/applications", map[string]any{"name": "user", "type": "private", "permissions": []string{"token:use"}})
	if status != http.StatusCreated {
		t.Fatalf("POST /applications = %d %s", status, out)
	}
	var app struct{ Key string }
	json.Unmarshal(out, &app)
	status, _, out = call("POST", "/reactors", map[string]any{"name": "sized", "code": `module.exports = async req => ({raw: "x".repeat(req.args.n)})`})
	if status != http.StatusCreated {
		t.Fatalf("POST /reactors = %d %s", status, out)
	}
	var r struct{ ID string }
	json.Unmarshal(out, &r)
	if status, _, out := callAs(t, addr, app.Key, "POST", "/reactors/"+r.ID+"/react", map[string]any{"args": map[string]any{"n": 60000}}); status != http.StatusOK {
		t.Errorf("a 60000-byte result = %d %.200s", status, out)
	}
	status, h, out := callAs(t, addr, app.Key, "POST", "/reactors/"+r.ID+"/react", map[string]any{"args": map[string]any{"n": 70000}})
	if status != http.StatusRequestEntityTooLarge || h.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(out), "64 KiB") {
		t.Errorf("a 70000-byte result = %d %s %s, want a 413 problem naming 64 KiB", status, h.Get("Content-Type"), out)
	}
}

// callAs sends a JSON request with key and returns the answer.
func callAs(t *testing.T, addr, key, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	buf, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(buf))
	req.Header.Set("SVC-API-KEY", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, out
}
