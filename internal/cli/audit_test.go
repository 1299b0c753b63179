package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

func TestAuditSinkFlags(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	os.WriteFile(secretFile, []byte("0123456789abcdef0123\n"), 0o600)
	for _, c := range []struct {
		name  string
		args  []string
		env   map[string]string
		sinks []string // names, or nil for an error
	}{
		{"none", nil, nil, []string{}},
		{"all", []string{"-audit-file", filepath.Join(dir, "a.jsonl"), "-audit-syslog", "tcp://127.0.0.1:6514",
			"-audit-http-url", "https://siem.example.com/in", "-audit-http-secret-file", secretFile}, nil, []string{"file", "syslog", "http"}},
		{"secret from env", []string{"-audit-http-url", "http://127.0.0.1:9/"}, map[string]string{"TOKENVAULT_AUDIT_HTTP_SECRET": "0123456789abcdef"}, []string{"http"}},
		{"flags from env", nil, map[string]string{"TOKENVAULT_AUDIT_SYSLOG": "udp://127.0.0.1:514"}, []string{"syslog"}},
		{"no secret", []string{"-audit-http-url", "http://127.0.0.1:9/"}, nil, nil},
		{"short secret", []string{"-audit-http-url", "http://127.0.0.1:9/"}, map[string]string{"TOKENVAULT_AUDIT_HTTP_SECRET": "short"}, nil},
		{"two secrets", []string{"-audit-http-url", "http://127.0.0.1:9/", "-audit-http-secret-file", secretFile}, map[string]string{"TOKENVAULT_AUDIT_HTTP_SECRET": "0123456789abcdef"}, nil},
		{"secret without url", []string{"-audit-http-secret-file", secretFile}, nil, nil},
		{"syslog without port", []string{"-audit-syslog", "udp://127.0.0.1"}, nil, nil},
		{"file in a missing directory", []string{"-audit-file", filepath.Join(dir, "no", "a.jsonl")}, nil, nil},
	} {
		getenv := func(k string) string { return c.env[k] }
		cfg, err := parseConfigTo(c.args, getenv, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sinks, closeSinks, err := auditSinks(cfg, getenv)
		if c.sinks == nil {
			if err == nil {
				closeSinks()
				t.Errorf("%s: no error", c.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var names []string
		for _, s := range sinks {
			names = append(names, s.Name())
		}
		if fmt.Sprint(names) != fmt.Sprint(c.sinks) {
			t.Errorf("%s: sinks %v, want %v", c.name, names, c.sinks)
		}
		closeSinks()
	}
	if _, err := parseConfigTo([]string{"-audit-file-max-bytes", "0"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("-audit-file-max-bytes 0 accepted")
	}
}

// auditKills is the number of kill -9 rounds of TestAuditExportSurvivesKill.
const auditKills = 3

// TestAuditExportSurvivesKill kills the server (SIGKILL) while it
// tokenizes under load and exports its audit lines to a small, rotating
// file sink, auditKills times, restarting it on the same data each time.
// At the end every audit line in the store, among them the creation line
// of every acknowledged token, is in the file sink at least once, and
// every duplicate is the same event.
func TestAuditExportSurvivesKill(t *testing.T) {
	if os.Getenv("TOKENVAULT_CRASH_TEST") != "1" {
		t.Skip("kills a server subprocess 3 times; run it with TOKENVAULT_CRASH_TEST=1 go test -run TestAuditExportSurvivesKill ./internal/cli")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := buildServer(t)
	data := filepath.Join(dir, "data")
	audit := filepath.Join(dir, "audit.jsonl")
	// 256 KiB files, all kept: rotations happen under load.
	flags := []string{"-audit-file", audit, "-audit-file-max-bytes", "262144", "-audit-file-keep", "100000"}

	srv := startProcess(t, bin, data, flags...)
	mgmt := readManagementKey(t, data)
	key := createRevealApp(t, srv.addr, mgmt)
	var all []acked
	for round := 1; round <= auditKills; round++ {
		load := startLoad(srv.addr, key, 16)
		deadline := time.Now().Add(10 * time.Second)
		for load.count() < 10 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(500*time.Millisecond + rand.N(time.Second))
		srv.kill(t)
		res := load.stop()
		if len(res.acked) == 0 {
			t.Errorf("round %d: no request was acknowledged before the kill", round)
		}
		all = append(all, res.acked...)
		exported, _ := readAuditFiles(t, audit)

		srv = startProcess(t, bin, data, flags...)
		t.Logf("round %d: %d tokens acknowledged; %d events in the sink at the kill", round, len(res.acked), len(exported))
	}

	stored := listAllLogs(t, srv.addr, mgmt)
	var got map[string]string
	var lines int
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, lines = readAuditFiles(t, audit)
		missing := 0
		for id := range stored {
			if _, ok := got[id]; !ok {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d stored audit lines never reached the file sink in 60 s", missing, len(stored))
		}
		time.Sleep(100 * time.Millisecond)
	}
	created := map[string]bool{}
	for _, line := range got {
		var ev struct {
			EntityID  string `json:"entity_id"`
			Operation string `json:"operation"`
		}
		json.Unmarshal([]byte(line), &ev)
		if ev.Operation == "create" {
			created[ev.EntityID] = true
		}
	}
	lost := 0
	for _, a := range all {
		if !created[a.id] {
			if lost++; lost <= 10 {
				t.Errorf("token %s was acknowledged, but no audit event of its creation was exported", a.id)
			}
		}
	}
	files, _ := filepath.Glob(audit + "*")
	t.Logf("%d tokens acknowledged, %d audit lines stored, %d distinct events exported (%d lines) in %d files, %d creations missing",
		len(all), len(stored), len(got), lines, len(files), lost)
	srv.terminate(t)
}

// readAuditFiles reads the sink's file and its rotated files, and returns
// each event's line by id, failing on two different lines of one id, and
// how many whole lines they hold.
func readAuditFiles(t *testing.T, path string) (byID map[string]string, lines int) {
	t.Helper()
	files, err := filepath.Glob(path + "*")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			continue // rotated away meanwhile
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			var ev struct {
				Schema, ID string
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				// A line cut by the kill: the write was not acknowledged,
				// so it is delivered again whole.
				continue
			}
			if ev.Schema == tokenvault.AuditCheckpointSchema {
				continue // a signed checkpoint of the chain, not a line
			}
			if ev.Schema != "tokenvault.audit/v1" || ev.ID == "" {
				t.Errorf("%s: line %s is not a v1 event", name, line)
			}
			if prev, ok := out[ev.ID]; ok && prev != line {
				t.Errorf("event %s exported twice with different contents:\n%s\n%s", ev.ID, prev, line)
			}
			out[ev.ID] = line
			lines++
		}
		f.Close()
	}
	return out, lines
}

// listAllLogs pages through GET /logs and returns the ids.
func listAllLogs(t *testing.T, addr, key string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	start := ""
	for {
		u := "http://" + addr + "/logs?size=100"
		if start != "" {
			u += "&start=" + url.QueryEscape(start)
		}
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("SVC-API-KEY", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Pagination struct {
				After string `json:"after"`
			} `json:"pagination"`
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if err := json.Unmarshal(b, &page); res.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("GET /logs = %d %s", res.StatusCode, strings.TrimSpace(string(b)))
		}
		for _, l := range page.Data {
			ids[l.ID] = true
		}
		if page.Pagination.After == "" || len(page.Data) == 0 {
			return ids
		}
		start = page.Pagination.After
	}
}
