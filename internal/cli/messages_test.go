package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOperatorCommandsSayWhatToChange: an operator command whose server
// cannot be reached names the URL, the cause and -server /
// TOKENVAULT_SERVER; one whose operator key the server refuses names
// -operator-key-file / TOKENVAULT_OPERATOR_KEY and where the key came
// from, never the key.
func TestOperatorCommandsSayWhatToChange(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	keyFile := filepath.Join(t.TempDir(), "operator.key")
	if err := os.WriteFile(keyFile, []byte("not-the-operator-key-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"tenant", "list", "-server", closed, "-operator-key-file", keyFile},
		{"backup", "-server", closed, "-operator-key-file", keyFile, "-o", filepath.Join(t.TempDir(), "b")},
	} {
		code, _, errOut := runCLI(t, nil, args...)
		for _, want := range []string{closed, "connection refused", "-server", "TOKENVAULT_SERVER"} {
			if code != 1 || !strings.Contains(errOut, want) {
				t.Errorf("tokenvault %v with no server = %d %q, want it to say %q", args, code, errOut, want)
			}
		}
	}

	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	defer stop()
	code, _, errOut := runCLI(t, nil, "tenant", "list", "-server", "http://"+addr, "-operator-key-file", keyFile)
	for _, want := range []string{"-operator-key-file", "TOKENVAULT_OPERATOR_KEY", keyFile} {
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("tenant list with a wrong operator key = %d %q, want it to say %q", code, errOut, want)
		}
	}
	if strings.Contains(errOut, "not-the-operator-key") {
		t.Errorf("the message quotes the key: %q", errOut)
	}
}

// TestTenantCreateWithoutNamePrintsUsage: tenant create with no NAME exits
// 2 with its usage and flags on stderr, not "[]".
func TestTenantCreateWithoutNamePrintsUsage(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "tenant", "create")
	if code != 2 || !strings.Contains(errOut, "Usage: tokenvault tenant create") || !strings.Contains(errOut, "-owner-email") || !strings.Contains(errOut, "takes one NAME") || strings.Contains(errOut, "[]") || out != "" {
		t.Errorf("tenant create = %d %q %q, want 2 with its usage on stderr", code, out, errOut)
	}
}

// TestSubcommandHelpListsItsOwnFlags: rotate-master-key -h lists where the
// store is, its root of trust and its own flags, not the server's SMTP,
// audit, rate and listen flags; restore -h and backup -h theirs.
func TestSubcommandHelpListsItsOwnFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"rotate-master-key", "-h"}, []string{"-data", "-seal", "-to ", "-to-pkcs11-key-label", "-store", "-log-format", "TOKENVAULT_MASTER_KEY", "master.key.<key id>"},
			[]string{"-smtp-host", "-addr", "-audit-file", "-rate-per-key", "-tls-cert", "-operator-key-file", "-log-retention", "TOKENVAULT_SMTP_PASSWORD"}},
		{[]string{"restore", "-h"}, []string{"-i ", "-data", "-master-key-file", "-seal"}, []string{"-smtp-host", "-addr", "-server"}},
		{[]string{"backup", "-h"}, []string{"-o ", "-server", "-operator-key-file"}, []string{"-smtp-host", "-addr", "-data", "-seal"}},
	} {
		code, out, _ := runCLI(t, nil, tc.args...)
		if code != 0 {
			t.Errorf("tokenvault %v = %d", tc.args, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("tokenvault %v does not list %q:\n%s", tc.args, w, out)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("tokenvault %v lists %q, not its own:\n%s", tc.args, n, out)
			}
		}
	}
}

// TestDurationsAsPeopleWriteThem: -h prints defaults as they are written
// (400 days, 30s), and days are accepted by flags and environment alike,
// next to Go's units.
func TestDurationsAsPeopleWriteThem(t *testing.T) {
	_, out, _ := runCLI(t, nil, "-h")
	if !strings.Contains(out, "(default 400 days)") || strings.Contains(out, "9600h0m0s") || !strings.Contains(out, "(default 30s)") {
		t.Errorf("-h does not print the durations' defaults as written:\n%s", out)
	}
	day := 24 * time.Hour
	for _, tc := range []struct {
		args []string
		env  string
		want time.Duration
	}{
		{[]string{"-log-retention", "400d"}, "", 400 * day},
		{[]string{"-log-retention", "400 days"}, "", 400 * day},
		{[]string{"-log-retention=1 day"}, "", day},
		{nil, "30d", 30 * day},
		{nil, "1d12h", 36 * time.Hour},
		{[]string{"-log-retention", "9600h"}, "", 400 * day},
		{[]string{"-log-retention", "90m"}, "", 90 * time.Minute},
	} {
		cfg, err := parseConfig(tc.args, func(k string) string { return map[string]string{"TOKENVAULT_LOG_RETENTION": tc.env}[k] })
		if err != nil || cfg.logRetention != tc.want {
			t.Errorf("%q TOKENVAULT_LOG_RETENTION=%q: %v, %v; want %v", tc.args, tc.env, cfg.logRetention, err, tc.want)
		}
	}
	for _, bad := range []string{"400x", "d", "4d-1h", "1.5d", "forever"} {
		if _, err := parseConfig([]string{"-log-retention", bad}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "400d") {
			t.Errorf("-log-retention %q = %v, want a refusal saying how to write it", bad, err)
		}
	}
	for d, want := range map[time.Duration]string{0: "0s", day: "1 day", 400 * day: "400 days", time.Hour: "1h", 90 * time.Minute: "1h30m", 2 * time.Minute: "2m", 36 * time.Hour: "36h"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestOtherDefaultsAsPeopleWriteThem: -h prints the log level as it is
// written (info, not INFO) and the audit file's size in MiB, not bytes;
// sizes take binary units as well as bytes, levels any case.
func TestOtherDefaultsAsPeopleWriteThem(t *testing.T) {
	_, out, _ := runCLI(t, nil, "-h")
	if !strings.Contains(out, "(default info)") || !strings.Contains(out, "(default 100 MiB)") || strings.Contains(out, "104857600") || strings.Contains(out, "(default INFO)") {
		t.Errorf("-h does not print the defaults as written:\n%s", out)
	}
	for _, tc := range []struct {
		arg  string
		want int64
	}{{"262144", 262144}, {"10MiB", 10 << 20}, {"10 MiB", 10 << 20}, {"64KiB", 64 << 10}, {"1GiB", 1 << 30}, {"2m", 2 << 20}} {
		cfg, err := parseConfig([]string{"-audit-file-max-bytes", tc.arg}, func(string) string { return "" })
		if err != nil || cfg.auditFileMaxBytes != tc.want {
			t.Errorf("-audit-file-max-bytes %s = %d, %v; want %d", tc.arg, cfg.auditFileMaxBytes, err, tc.want)
		}
	}
	if _, err := parseConfig([]string{"-audit-file-max-bytes", "10 parsecs"}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "100MiB") {
		t.Errorf("-audit-file-max-bytes 10 parsecs = %v, want a refusal saying how to write it", err)
	}
	for _, lv := range []string{"WARN", "warn", "Debug"} {
		if _, err := parseConfig([]string{"-log-level", lv}, func(string) string { return "" }); err != nil {
			t.Errorf("-log-level %s: %v", lv, err)
		}
	}
}

// TestBadFlagIsOneLine: an unknown flag or a bad flag value, on serve and
// on other commands, exits 2 with one line that names it and where help is,
// not the whole usage; -h still prints the usage, listing every command.
func TestBadFlagIsOneLine(t *testing.T) {
	for _, args := range [][]string{{"-nosuchflag"}, {"serve", "-rate-per-key", "many"}, {"backup", "-x"}, {"audit", "verify", "-nosuch"}} {
		code, out, errOut := runCLI(t, nil, args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(errOut, " -h)") || strings.Contains(errOut, "Usage:") || out != "" {
			t.Errorf("tokenvault %v = %d, stdout %q, stderr %q; want 2 and one line naming the flag and -h", args, code, out, errOut)
		}
	}
	code, out, _ := runCLI(t, nil, "-h")
	for name := range commands {
		if name != "serve" && !strings.Contains(out, "\n  "+name+" ") {
			t.Errorf("tokenvault -h does not list %s:\n%s", name, out)
		}
	}
	if code != 0 || !strings.Contains(out, "Usage: tokenvault [serve]") || !strings.Contains(out, "-addr") {
		t.Errorf("tokenvault -h = %d %q, want the usage with its flags", code, out)
	}
}
