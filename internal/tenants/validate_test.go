package tenants

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestValidateEmail(t *testing.T) {
	for _, tc := range []struct {
		email string
		want  []string // the field errors at "email"
	}{
		{"ada@example.com", nil},
		{"", []string{"is required"}},
		{"Ada <ada@example.com>", []string{"must be a bare e-mail address such as ada@example.com, without a display name"}},
		{"not an address", []string{"must be a bare e-mail address such as ada@example.com, without a display name"}},
		{"ada\x00@example.com", []string{unit.NoControl}},
		{strings.Repeat("a", 250) + "@x.io", []string{"must be at most 254 characters"}},
	} {
		fe := unit.FieldErrors{}
		unit.ValidateEmail("email", tc.email, fe)
		if diff := cmp.Diff(tc.want, fe["email"]); diff != "" {
			t.Errorf("unit.ValidateEmail(%q) (-want +got):\n%s", tc.email, diff)
		}
	}
}

func TestValidateUser(t *testing.T) {
	fe := unit.FieldErrors{}
	ValidateUser("owner", User{Email: "x", FirstName: strings.Repeat("é", 11), LastName: "a\tb", Picture: "javascript:alert(1)"}, 10, fe)
	want := unit.FieldErrors{
		"owner.email":      {"must be a bare e-mail address such as ada@example.com, without a display name"},
		"owner.first_name": {"must be at most 10 characters"},
		"owner.last_name":  {unit.NoControl},
		"owner.picture":    {"must be an http or https URL of at most 2048 characters"},
	}
	if diff := cmp.Diff(want, fe); diff != "" {
		t.Errorf("ValidateUser (-want +got):\n%s", diff)
	}
	fe = unit.FieldErrors{}
	ValidateUser("owner", User{Email: "ada@example.com", FirstName: "Ada", Picture: "https://example.com/a.png"}, 10, fe)
	if len(fe) != 0 {
		t.Errorf("ValidateUser(a good user) = %v, want no errors", fe)
	}
}

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name, app, wantApp string
		want               unit.FieldErrors
	}{
		{"Acme", "", "Management", unit.FieldErrors{}},
		{"Acme", "Ops", "Ops", unit.FieldErrors{}},
		{" ", "  ", "  ", unit.FieldErrors{"name": {"is required"}, "application_name": {"must not be blank; leave it out for \"Management\""}}},
		{"abcdef", "a\nb", "a\nb", unit.FieldErrors{"name": {"must be at most 5 characters"}, "application_name": {unit.NoControl}}},
	} {
		fe := unit.FieldErrors{}
		if app := ValidateName(tc.name, tc.app, 5, fe); app != tc.wantApp {
			t.Errorf("ValidateName(%q, %q) = %q, want %q", tc.name, tc.app, app, tc.wantApp)
		}
		if diff := cmp.Diff(tc.want, fe); diff != "" {
			t.Errorf("ValidateName(%q, %q) (-want +got):\n%s", tc.name, tc.app, diff)
		}
	}
}
