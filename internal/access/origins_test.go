package access

import (
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestNormalizeOrigin(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://shop.example", "https://shop.example"},
		{"HTTPS://Shop.Example", "https://shop.example"},
		{"http://127.0.0.1:8081", "http://127.0.0.1:8081"},
		{"https://shop.example:443", "https://shop.example"},
		{"http://shop.example:80", "http://shop.example"},
		{"http://shop.example:443", "http://shop.example:443"},
		{"https://[::1]:8443", "https://[::1]:8443"},
		{"http://localhost:3000", "http://localhost:3000"},
		{"https://xn--bcher-kva.example", "https://xn--bcher-kva.example"},
	} {
		if got, err := NormalizeOrigin(tc.in); err != nil || got != tc.want {
			t.Errorf("NormalizeOrigin(%q) = %q, %v, want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{
		"", "shop.example", "//shop.example", "ftp://shop.example", "https://", "https://shop.example/",
		"https://shop.example/pay", "https://shop.example?x=1", "https://shop.example?", "https://shop.example#x",
		"https://user@shop.example", "https://*.shop.example", "*", "null", "https://shop.example:0",
		"https://shop.example:65536", "https://shop.example:", "https://shop.example:08", "https://bücher.example",
		"https://shop.example;script-src", "https://shop example", "https://shop.example,https://evil.example",
		"https://shop.example\n", "https://'self'", "javascript:alert(1)", "https://-shop.example",
	} {
		if got, err := NormalizeOrigin(bad); err == nil {
			t.Errorf("NormalizeOrigin(%q) = %q, want an error", bad, got)
		}
	}
}

func TestNormalizeOrigins(t *testing.T) {
	fe := unit.FieldErrors{}
	got := NormalizeOrigins(Public, []string{"https://A.example", "https://b.example:443"}, fe)
	if len(fe) != 0 || len(got) != 2 || got[0] != "https://a.example" || got[1] != "https://b.example" {
		t.Errorf("NormalizeOrigins = %q, %v", got, fe)
	}
	for _, tc := range []struct {
		name    string
		typ     ApplicationType
		origins []string
		field   string
	}{
		{"private", Private, []string{"https://a.example"}, "allowed_origins"},
		{"management", Management, []string{"https://a.example"}, "allowed_origins"},
		{"duplicate after normalizing", Public, []string{"https://a.example", "HTTPS://A.EXAMPLE:443"}, "allowed_origins[1]"},
		{"malformed", Public, []string{"https://a.example", "https://a.example/x"}, "allowed_origins[1]"},
		{"too many", Public, make([]string, MaxAllowedOrigins+1), "allowed_origins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := unit.FieldErrors{}
			NormalizeOrigins(tc.typ, tc.origins, fe)
			if _, ok := fe[tc.field]; !ok || len(fe) != 1 {
				t.Errorf("NormalizeOrigins(%s, %q) errors %v, want one at %s", tc.typ, tc.origins, fe, tc.field)
			}
		})
	}
	if got := NormalizeOrigins(Private, []string{}, unit.FieldErrors{}); got != nil {
		t.Errorf("an empty list gives %q, want nil", got)
	}
}
