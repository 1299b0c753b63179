package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// An invitation created over HTTP is "sent" to the log, and the token in
// the logged e-mail accepts it.
func TestInvitationMailGoesToTheLog(t *testing.T) {
	dir := t.TempDir()
	addr, out, stop := start(t, dir, nil)
	defer stop()
	keyBytes, err := os.ReadFile(filepath.Join(dir, "management.key"))
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, key, body string) int {
		req, _ := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("SVC-API-KEY", key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post("/tenants/self/invitations", strings.TrimSpace(string(keyBytes)), `{"email": "ada@example.com"}`); code != 201 {
		t.Fatalf("POST /tenants/self/invitations = %d\n%s", code, out)
	}
	m := regexp.MustCompile(`inv_[A-Za-z0-9_-]+`).FindString(out.String())
	if m == "" || !strings.Contains(out.String(), "to=ada@example.com") {
		t.Fatalf("no invitation e-mail in the log:\n%s", out)
	}
	if code := post("/tenants/invitations/accept", "", `{"token": "`+m+`"}`); code != 201 {
		t.Errorf("accepting with the logged token = %d", code)
	}
}
