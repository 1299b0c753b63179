package cli

import (
	"testing"
	"time"
)

// TestCVCRetentionFlag: -cvc-retention and TOKENVAULT_CVC_RETENTION take a
// Go duration (the flag wins), default to 0 (the library's hour), refuse a
// negative or malformed value.
func TestCVCRetentionFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want time.Duration
	}{
		{nil, "", 0},
		{[]string{"-cvc-retention", "15m"}, "", 15 * time.Minute},
		{nil, "2h", 2 * time.Hour},
		{[]string{"-cvc-retention=30s"}, "2h", 30 * time.Second},
	} {
		cfg, err := parseConfig(c.args, func(k string) string {
			if k == "TOKENVAULT_CVC_RETENTION" {
				return c.env
			}
			return ""
		})
		if err != nil || cfg.cvcRetention != c.want {
			t.Errorf("parseConfig(%q, TOKENVAULT_CVC_RETENTION=%q).cvcRetention = %v, %v; want %v", c.args, c.env, cfg.cvcRetention, err, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		env  string
	}{{[]string{"-cvc-retention", "-1m"}, ""}, {nil, "-1h"}, {nil, "an hour"}, {[]string{"-cvc-retention", "soon"}, ""}} {
		if _, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_CVC_RETENTION": c.env}[k] }); err == nil {
			t.Errorf("parseConfig(%q, TOKENVAULT_CVC_RETENTION=%q) accepted", c.args, c.env)
		}
	}
}
