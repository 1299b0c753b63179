package cli

import (
	"testing"
	"time"
)

// TestTokenIntentTTLFlag: -token-intent-ttl and TOKENVAULT_TOKEN_INTENT_TTL
// take a duration from 0 (the library's default) to 48 hours; anything
// else stops the server before it starts.
func TestTokenIntentTTLFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want time.Duration
	}{
		{nil, "", 0},
		{[]string{"-token-intent-ttl", "6h"}, "", 6 * time.Hour},
		{nil, "48h", 48 * time.Hour},
		{[]string{"-token-intent-ttl=30m"}, "2h", 30 * time.Minute},
	} {
		cfg, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_TOKEN_INTENT_TTL": c.env}[k] })
		if err != nil || cfg.tokenIntentTTL != c.want {
			t.Errorf("parseConfig(%q, TOKENVAULT_TOKEN_INTENT_TTL=%q).tokenIntentTTL = %v, %v; want %v", c.args, c.env, cfg.tokenIntentTTL, err, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		env  string
	}{{[]string{"-token-intent-ttl", "49h"}, ""}, {nil, "-1h"}, {nil, "3d"}, {[]string{"-token-intent-ttl", "soon"}, ""}} {
		if _, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_TOKEN_INTENT_TTL": c.env}[k] }); err == nil {
			t.Errorf("parseConfig(%q, TOKENVAULT_TOKEN_INTENT_TTL=%q) accepted", c.args, c.env)
		}
	}
}
