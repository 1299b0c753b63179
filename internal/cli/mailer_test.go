package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/smtptest"
)

// postJSON posts body to addr+path with key (if any) and returns the
// status and the answer.
func postJSON(t *testing.T, addr, path, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("SVC-API-KEY", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// createInvitation invites email and returns the invitation's id.
func createInvitation(t *testing.T, addr, key, email string, want int) string {
	t.Helper()
	code, body := postJSON(t, addr, "/tenants/self/invitations", key, `{"email": "`+email+`"}`)
	if code != want {
		t.Fatalf("POST /tenants/self/invitations = %d %s, want %d", code, body, want)
	}
	var inv struct{ ID string }
	json.Unmarshal([]byte(body), &inv)
	return inv.ID
}

var tokenPattern = regexp.MustCompile(`inv_[A-Za-z0-9_-]+`)

// mailedToken returns the acceptance token in the i-th message srv got,
// and the link that carries it.
func mailedToken(t *testing.T, srv *smtptest.Server, i int) (token, link string) {
	t.Helper()
	msgs := srv.Messages()
	if len(msgs) <= i {
		t.Fatalf("the SMTP server got %d messages, want %d", len(msgs), i+1)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(msgs[i].Data))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatal(err)
	}
	link = regexp.MustCompile(`https://app\.example\.com/join\?token=\S+`).FindString(string(body))
	token = tokenPattern.FindString(link)
	if token == "" || msgs[i].To[0] != "ada@example.com" {
		t.Fatalf("no link in the e-mail to %v:\n%s", msgs[i].To, body)
	}
	return token, link
}

// assertLogHasNo fails if the log holds any of secrets, or anything that
// looks like an invitation token.
func assertLogHasNo(t *testing.T, log string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("the log holds %q:\n%s", s, log)
		}
	}
	if m := tokenPattern.FindString(log); m != "" {
		t.Errorf("the log holds an invitation token %q:\n%s", m, log)
	}
}

// TestInvitationsBySMTP is the invitations' secret-leak test: with SMTP
// configured, created and resent invitations are e-mailed with their
// links, a link accepts, and neither a token nor a link, nor the
// invitee's address, appears in the log; a refused e-mail is 503, and the
// log says why without them.
func TestInvitationsBySMTP(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	dir := t.TempDir()
	addr, out, stop := startWith(t, dir, map[string]string{"TOKENVAULT_SMTP_HOST": srv.Host},
		"-smtp-port", strconv.Itoa(srv.Port), "-smtp-tls", "none", "-smtp-from", "Token Vault <vault@example.com>",
		"-invitation-url", "https://app.example.com/join")
	key := readManagementKey(t, dir)

	id := createInvitation(t, addr, key, "ada@example.com", 201)
	token1, link1 := mailedToken(t, srv, 0)
	if code, body := postJSON(t, addr, "/tenants/self/invitations/"+id+"/resend", key, ""); code != 200 {
		t.Fatalf("resend = %d %s", code, body)
	}
	token2, link2 := mailedToken(t, srv, 1)
	if token1 == token2 {
		t.Error("the resent e-mail has the first token")
	}
	if code, body := postJSON(t, addr, "/tenants/invitations/accept", "", `{"token": "`+token1+`"}`); code != 404 {
		t.Errorf("accepting with the replaced token = %d %s, want 404", code, body)
	}
	if code, body := postJSON(t, addr, "/tenants/invitations/accept", "", `{"token": "`+token2+`"}`); code != 201 {
		t.Errorf("accepting with the mailed token = %d %s, want 201", code, body)
	}
	stop()

	log := out.String()
	if !strings.Contains(log, "invitations are e-mailed by SMTP") || strings.Contains(log, "SMTP is not configured") {
		t.Errorf("the start of the log does not say invitations are e-mailed:\n%s", log)
	}
	if n := strings.Count(log, "msg=\"invitation e-mailed\""); n != 2 {
		t.Errorf("%d lines say an invitation was e-mailed, want 2:\n%s", n, log)
	}
	assertLogHasNo(t, log, token1, link1, token2, link2, "ada@", "token=")

	// A server that refuses the recipient: 503, nothing saved, and the log
	// says why, without the link.
	refusing := smtptest.Start(t, smtptest.Options{RejectRcpt: true})
	addr, out, stop = startWith(t, dir, nil, "-smtp-host", refusing.Host, "-smtp-port", strconv.Itoa(refusing.Port),
		"-smtp-tls", "none", "-smtp-from", "vault@example.com", "-invitation-url", "https://app.example.com/join")
	createInvitation(t, addr, key, "bob@example.com", 503)
	stop()
	log = out.String()
	if !strings.Contains(log, "invitation e-mail not sent") || !strings.Contains(log, "550") {
		t.Errorf("the log does not say why the e-mail was not sent:\n%s", log)
	}
	assertLogHasNo(t, log, "bob@", "token=")
}

// TestInvitationsWithoutSMTP: without SMTP the server says so at start,
// invitations are created, and the log says so with the tenant, the
// invitation and the recipient's domain only: never a token or link.
func TestInvitationsWithoutSMTP(t *testing.T) {
	dir := t.TempDir()
	addr, out, stop := start(t, dir, nil)
	key := readManagementKey(t, dir)
	id := createInvitation(t, addr, key, "ada@example.com", 201)
	stop()
	log := out.String()
	if strings.Count(log, "SMTP is not configured") != 1 {
		t.Errorf("the log does not say once that invitations cannot be e-mailed:\n%s", log)
	}
	var line map[string]string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "invitation created but not e-mailed") {
			rec, err := parseLogLine(l)
			if err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			line = rec
		}
	}
	if line == nil || line["invitation"] != id || line["recipient_domain"] != "example.com" || line["tenant"] == "" || line["level"] != "WARN" {
		t.Errorf("no warning that invitation %s was created but not e-mailed:\n%s", id, log)
	}
	assertLogHasNo(t, log, "ada@", "token=")
}

// The SMTP password comes from a file or the environment, never a flag,
// and goes with a user name; SMTP settings need a host and a sender.
func TestSMTPConfig(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "smtp-password")
	if err := os.WriteFile(pwFile, []byte("pw-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"-smtp-host", "smtp.example.com", "-smtp-from", "vault@example.com"}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		ok   bool
	}{
		{"password file", append(base, "-smtp-user", "vault", "-smtp-password-file", pwFile), nil, true},
		{"password env", append(base, "-smtp-user", "vault"), map[string]string{"TOKENVAULT_SMTP_PASSWORD": "pw-env"}, true},
		{"no auth", base, nil, true},
		{"implicit tls", append(base, "-smtp-tls", "tls"), nil, true},
		{"both passwords", append(base, "-smtp-user", "vault", "-smtp-password-file", pwFile), map[string]string{"TOKENVAULT_SMTP_PASSWORD": "pw-env"}, false},
		{"user without password", append(base, "-smtp-user", "vault"), nil, false},
		{"password without user", base, map[string]string{"TOKENVAULT_SMTP_PASSWORD": "pw-env"}, false},
		{"missing password file", append(base, "-smtp-user", "vault", "-smtp-password-file", filepath.Join(dir, "nope")), nil, false},
		{"no sender", []string{"-smtp-host", "smtp.example.com"}, nil, false},
		{"no host", []string{"-smtp-from", "vault@example.com"}, nil, false},
		{"none to a remote host", append(base, "-smtp-tls", "none"), nil, false},
		{"unknown tls mode", append(base, "-smtp-tls", "maybe"), nil, false},
		{"no password flag", append(base, "-smtp-password", "pw"), nil, false},
		{"relative invitation url", []string{"-invitation-url", "/join"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			var out bytes.Buffer
			cfg, err := parseConfigTo(tc.args, getenv, &out)
			if err == nil {
				_, err = newMailer(cfg, getenv, logger(&out, "text", 0))
			}
			if (err == nil) != tc.ok {
				t.Errorf("%v = %v, want ok %v", tc.args, err, tc.ok)
			}
			for _, s := range []string{"pw-from-file", "pw-env"} {
				if strings.Contains(out.String(), s) || (err != nil && strings.Contains(err.Error(), s)) {
					t.Errorf("the password %q is in the output or error: %v\n%s", s, err, out.String())
				}
			}
		})
	}
}
