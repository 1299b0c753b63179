package cli

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

// TestAuditCheckpointFlags: the checkpoint flags and their variables
// reach the library's options, 0 turning either off (the library's
// negative), and a negative value is refused.
func TestAuditCheckpointFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want tokenvault.AuditChainOptions
	}{
		{nil, nil, tokenvault.AuditChainOptions{CheckpointEvery: 1000, CheckpointInterval: time.Minute}},
		{[]string{"-audit-checkpoint-every", "50", "-audit-checkpoint-interval", "30s"}, nil, tokenvault.AuditChainOptions{CheckpointEvery: 50, CheckpointInterval: 30 * time.Second}},
		{nil, map[string]string{"TOKENVAULT_AUDIT_CHECKPOINT_EVERY": "0", "TOKENVAULT_AUDIT_CHECKPOINT_INTERVAL": "5m"}, tokenvault.AuditChainOptions{CheckpointEvery: -1, CheckpointInterval: 5 * time.Minute}},
		{[]string{"-audit-checkpoint-interval=0"}, nil, tokenvault.AuditChainOptions{CheckpointEvery: 1000, CheckpointInterval: -1}},
	} {
		cfg, err := parseConfig(c.args, func(k string) string { return c.env[k] })
		if err != nil {
			t.Fatalf("parseConfig(%q, %v): %v", c.args, c.env, err)
		}
		if got := auditChainOptions(cfg); got != c.want {
			t.Errorf("parseConfig(%q, %v) gives %+v, want %+v", c.args, c.env, got, c.want)
		}
	}
	for _, args := range [][]string{{"-audit-checkpoint-every", "-1"}, {"-audit-checkpoint-interval", "-1m"}} {
		if _, err := parseConfig(args, func(string) string { return "" }); err == nil {
			t.Errorf("parseConfig(%q) accepted a negative checkpoint setting", args)
		}
	}
}

// TestServerLogsAuditKey: the server logs, at start, the id and public
// key of the checkpoint signing key in use, the same GET /audit/keys
// publishes without a key; a restart logs the same key.
func TestServerLogsAuditKey(t *testing.T) {
	dir := t.TempDir()
	addr, out, stop := start(t, dir, nil)
	code, body := get(t, "http://"+addr+"/audit/keys", "")
	stop()
	if code != 200 {
		t.Fatalf("GET /audit/keys = %d %s", code, body)
	}
	var keys struct {
		Keys []struct {
			ID        string `json:"id"`
			PublicKey []byte `json:"public_key"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(body), &keys); err != nil || len(keys.Keys) != 1 {
		t.Fatalf("GET /audit/keys = %s (%v); want one key", body, err)
	}
	k := keys.Keys[0]
	logged := regexp.MustCompile(`msg="audit chain signing key" key_id=(\w+) algorithm=Ed25519 public_key="?([^"\s]+)`)
	m := logged.FindStringSubmatch(out.String())
	if m == nil || m[1] != k.ID || m[2] != base64.StdEncoding.EncodeToString(k.PublicKey) {
		t.Fatalf("the start log does not name key %s (%s):\n%s", k.ID, base64.StdEncoding.EncodeToString(k.PublicKey), out)
	}
	_, out, stop = start(t, dir, nil)
	stop()
	if !strings.Contains(out.String(), "key_id="+k.ID) {
		t.Errorf("a restart logs another key:\n%s", out)
	}
}
