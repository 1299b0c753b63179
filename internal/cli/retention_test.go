package cli

import (
	"testing"
	"time"
)

func TestLogRetentionConfig(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want time.Duration
	}{
		{nil, "", 400 * 24 * time.Hour},
		{nil, "720h", 720 * time.Hour},
		{[]string{"-log-retention", "0"}, "720h", 0},
		{[]string{"-log-retention=9000h"}, "", 9000 * time.Hour},
	} {
		cfg, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_LOG_RETENTION": c.env}[k] })
		if err != nil || cfg.logRetention != c.want {
			t.Errorf("parseConfig(%q, TOKENVAULT_LOG_RETENTION=%q).logRetention = %v, %v; want %v", c.args, c.env, cfg.logRetention, err, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		env  string
	}{{[]string{"-log-retention", "-1h"}, ""}, {nil, "a year"}} {
		if _, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_LOG_RETENTION": c.env}[k] }); err == nil {
			t.Errorf("parseConfig(%q, TOKENVAULT_LOG_RETENTION=%q) accepted a bad retention", c.args, c.env)
		}
	}
}
