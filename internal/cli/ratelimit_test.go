package cli

import "testing"

// TestRateLimitConfig: the server's rate limits default to values that
// leave bench/run.sh unthrottled, and flags and environment set them.
func TestRateLimitConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cfg, err := parseConfig(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ratePerKey != 20000 || cfg.ratePerTenant != 100000 || cfg.sessionsPerApp != 5 || cfg.authFailuresPerMinute != 100 {
		t.Errorf("defaults = key %v, tenant %v, sessions %v, auth failures %v; want 20000, 100000, 5, 100",
			cfg.ratePerKey, cfg.ratePerTenant, cfg.sessionsPerApp, cfg.authFailuresPerMinute)
	}
	cfg, err = parseConfig([]string{"-rate-per-key", "7.5", "-auth-failures-per-minute", "0"},
		env(map[string]string{"TOKENVAULT_RATE_PER_TENANT": "30", "TOKENVAULT_RATE_PER_KEY": "1", "TOKENVAULT_SESSIONS_PER_APPLICATION": "0"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ratePerKey != 7.5 || cfg.ratePerTenant != 30 || cfg.sessionsPerApp != -1 || cfg.authFailuresPerMinute != -1 {
		t.Errorf("set = key %v, tenant %v, sessions %v, auth failures %v; want 7.5 (flag over env), 30, no limit, no limit",
			cfg.ratePerKey, cfg.ratePerTenant, cfg.sessionsPerApp, cfg.authFailuresPerMinute)
	}
	for _, m := range []map[string]string{{"TOKENVAULT_RATE_PER_KEY": "fast"}, {"TOKENVAULT_AUTH_FAILURES_PER_MINUTE": "1.5"}, {"TOKENVAULT_RATE_PER_TENANT": "-1"}} {
		if _, err := parseConfig(nil, env(m)); err == nil {
			t.Errorf("parseConfig with %v accepted", m)
		}
	}
}

// TestTrustForwardedForConfig: off by default, on by flag or environment.
func TestTrustForwardedForConfig(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{{nil, "", false}, {nil, "true", true}, {[]string{"-trust-forwarded-for"}, "", true}, {[]string{"-trust-forwarded-for=false"}, "true", false}} {
		cfg, err := parseConfig(c.args, func(k string) string { return map[string]string{"TOKENVAULT_TRUST_FORWARDED_FOR": c.env}[k] })
		if err != nil || cfg.trustForwardedFor != c.want {
			t.Errorf("parseConfig(%q, TOKENVAULT_TRUST_FORWARDED_FOR=%q).trustForwardedFor = %v, %v; want %v", c.args, c.env, cfg.trustForwardedFor, err, c.want)
		}
	}
	if _, err := parseConfig(nil, func(k string) string { return map[string]string{"TOKENVAULT_TRUST_FORWARDED_FOR": "maybe"}[k] }); err == nil {
		t.Error("TOKENVAULT_TRUST_FORWARDED_FOR=maybe accepted")
	}
}
