package cli

import (
	"context"
	"encoding/json"
	"flag"
	"strings"
	"testing"
)

func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	code = cli(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestHelpListsEveryFlagWithItsEnvironmentVariable: -h exits 0 and names,
// for every flag, its environment variable, and lists the settings that are
// environment variables only.
func TestHelpListsEveryFlagWithItsEnvironmentVariable(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"serve", "-h"}, {"--help"}} {
		code, out, _ := runCLI(t, nil, args...)
		if code != 0 {
			t.Errorf("tokenvault %v exited %d, want 0", args, code)
		}
		c := defaultConfig()
		fs := serveFlags(&c)
		fs.VisitAll(func(f *flag.Flag) {
			env := fs.env[f.Name]
			if env == "" {
				t.Errorf("-%s has no environment variable", f.Name)
			}
			if !strings.Contains(out, "  -"+f.Name) || !strings.Contains(out, "environment: "+env) {
				t.Errorf("tokenvault %v does not list -%s with %s:\n%s", args, f.Name, env, out)
			}
		})
		for _, e := range envOnly {
			if !strings.Contains(out, e.name) {
				t.Errorf("tokenvault %v does not list %s", args, e.name)
			}
		}
	}
	if code, out, _ := runCLI(t, nil, "help"); code != 0 || !strings.Contains(out, "rotate-master-key") || !strings.Contains(out, "version") {
		t.Errorf("tokenvault help = %d %q", code, out)
	}
}

// TestHelpListsEveryCommand: help names every command, with its summary
// (token-access and audit were once missing from it).
func TestHelpListsEveryCommand(t *testing.T) {
	code, out, _ := runCLI(t, nil, "help")
	if code != 0 {
		t.Fatalf("tokenvault help = %d", code)
	}
	for name, c := range commands {
		if !strings.Contains(out, "  "+name+" ") || !strings.Contains(out, c.summary) {
			t.Errorf("tokenvault help does not list %s:\n%s", name, out)
		}
	}
}

func TestUnknownCommandsAndFlags(t *testing.T) {
	if code, _, errOut := runCLI(t, nil, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("tokenvault frobnicate = %d %q, want 2 naming the unknown command", code, errOut)
	}
	if code, _, _ := runCLI(t, nil, "-no-such-flag"); code == 0 {
		t.Error("an unknown flag succeeded")
	}
	if code, _, errOut := runCLI(t, nil, "-log-format", "xml"); code != 1 || !strings.Contains(errOut, "-log-format") {
		t.Errorf("-log-format xml = %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, map[string]string{"TOKENVAULT_LOG_LEVEL": "loud"}); code != 1 || !strings.Contains(errOut, "TOKENVAULT_LOG_LEVEL") {
		t.Errorf("TOKENVAULT_LOG_LEVEL=loud = %d %q, want a failure naming the variable", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "tokenvault ") || !strings.Contains(out, "built with go") {
		t.Errorf("tokenvault version = %d %q %q", code, out, errOut)
	}
}

// TestLogLevelAndFormat: -log-format json writes JSON lines and nothing
// else, on a first run too (the management key banner goes to stderr), and
// -log-level warn drops the Info lines (the request log among them).
func TestLogLevelAndFormat(t *testing.T) {
	dir := t.TempDir()
	addr, out, stop := startWith(t, dir, nil, "-log-format", "json")
	get(t, "http://"+addr+"/healthz", "")
	stop()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	sawListening := false
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("log line is not JSON: %q", l)
		}
		if m["msg"] == "listening" {
			sawListening = true
		}
	}
	if !sawListening {
		t.Errorf("no JSON listening line in:\n%s", out)
	}

	_, out, stop = startWith(t, dir, map[string]string{"TOKENVAULT_LOG_LEVEL": "warn"})
	stop()
	if strings.Contains(out.String(), "level=INFO") {
		t.Errorf("TOKENVAULT_LOG_LEVEL=warn still logs Info lines:\n%s", out)
	}
}
