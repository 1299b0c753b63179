package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRequestLog: every API request is logged once, after it is answered,
// with its method, route pattern, status, duration and the tenant of an
// accepted key; never a key, a query string, a path id, or token data. The
// probes and /metrics are not logged.
func TestRequestLog(t *testing.T) {
	dir := t.TempDir()
	addr, out, stop := start(t, dir, nil)
	base := "http://" + addr
	mgmtKey := readManagementKey(t, dir)
	appKey := createRevealApp(t, addr, mgmtKey)

	code, body := get(t, base+"/tenants/self", mgmtKey)
	var tenant struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &tenant); code != 200 || err != nil || tenant.ID == "" {
		t.Fatalf("GET /tenants/self = %d %s", code, body)
	}
	secret := "078-05-1120"
	tokenBody := tokenizeBody(secret)
	tokenID, code, body, err, _ := tokenize(http.DefaultClient, addr, appKey, bytes.NewReader(tokenBody), int64(len(tokenBody)))
	if err != nil || code != 201 {
		t.Fatalf("POST /tokenize = %d %s %v", code, body, err)
	}
	if code, body := get(t, base+"/tokens/"+tokenID, appKey); code != 200 || !strings.Contains(body, secret) {
		t.Fatalf("GET /tokens/{id} = %d %s", code, body)
	}
	if code, _ := get(t, base+"/no/such/route", mgmtKey); code != 404 {
		t.Errorf("GET /no/such/route = %d, want 404", code)
	}
	// A request carrying secrets in the query string and the key header.
	proxyKey, apiKey := "SECRET-proxy-key-4f1c", "key_SECRET-api-key-9b2e"
	proxyCode, _ := get(t, base+"/proxy/charge?svc-proxy-key="+proxyKey, apiKey)
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if code, _ := get(t, base+path, ""); code != 200 {
			t.Errorf("GET %s = %d", path, code)
		}
	}
	stop() // waits for every handler, so every line is written

	type entry struct{ method, route, status, tenant string }
	var got []entry
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "time=") {
			continue // the banner that shows the first key once, on purpose
		}
		for _, s := range []string{mgmtKey, appKey, secret, tokenID, proxyKey, apiKey, "svc-proxy-key", "/proxy/charge", "/no/such"} {
			if strings.Contains(line, s) {
				t.Errorf("a log line holds %q:\n%s", s, line)
			}
		}
		rec, err := parseLogLine(line)
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if rec["msg"] != "request" {
			continue
		}
		if rec["level"] != "INFO" {
			t.Errorf("request logged at %s, want INFO: %s", rec["level"], line)
		}
		if d, err := time.ParseDuration(rec["duration"]); err != nil || d <= 0 {
			t.Errorf("duration %q: %v", rec["duration"], err)
		}
		if _, ok := rec["tenant"]; ok && rec["tenant"] == "" {
			t.Errorf("an empty tenant is logged, want none: %s", line)
		}
		got = append(got, entry{rec["method"], rec["route"], rec["status"], rec["tenant"]})
	}
	want := []entry{
		{"POST", "/applications", "201", tenant.ID},
		{"GET", "/tenants/self", "200", tenant.ID},
		{"POST", "/tokenize", "201", tenant.ID},
		{"GET", "/tokens/{id}", "200", tenant.ID},
		{"GET", "unmatched", "404", ""},
		{"GET", "/proxy/{rest...}", strconv.Itoa(proxyCode), ""},
	}
	// Sorted: a client may read an answer a moment before its line is
	// written, so the order of lines is not the order of requests.
	cmpEntry := func(a, b entry) int { return strings.Compare(a.route+a.status, b.route+b.status) }
	slices.SortFunc(got, cmpEntry)
	slices.SortFunc(want, cmpEntry)
	if !slices.Equal(got, want) {
		t.Errorf("request lines:\n got %v\nwant %v\nlog:\n%s", got, want, out)
	}
}

// parseLogLine reads one line of slog's text handler: key=value pairs
// separated by spaces, values quoted as Go strings when they need it.
func parseLogLine(line string) (map[string]string, error) {
	rec := map[string]string{}
	for line != "" {
		key, rest, ok := strings.Cut(line, "=")
		if !ok {
			return nil, strconv.ErrSyntax
		}
		var value string
		if strings.HasPrefix(rest, `"`) {
			quoted, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, err
			}
			value, _ = strconv.Unquote(quoted)
			rest = rest[len(quoted):]
		} else {
			value, rest, _ = strings.Cut(rest, " ")
			rest = " " + rest
		}
		if _, dup := rec[key]; dup {
			return nil, strconv.ErrSyntax
		}
		rec[key] = value
		line = strings.TrimPrefix(rest, " ")
	}
	return rec, nil
}
