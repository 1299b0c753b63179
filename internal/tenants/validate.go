package tenants

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Member roles: the values of MemberRecord.Role. A tenant has one OWNER,
// who cannot be removed; invited members are ADMINs.
const (
	RoleOwner = "OWNER"
	RoleAdmin = "ADMIN"
)

// User is a person who is a member of tenants (the root's User).
type User struct {
	ID        string `json:"id"`
	Email     string `json:"email,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	// Picture, when set, is an http or https URL of at most
	// MaxPictureLength bytes: it is shown in consoles as an image, so a
	// javascript: or data: address is refused.
	Picture string `json:"picture,omitempty"`
}

// MaxPictureLength bounds User.Picture.
const MaxPictureLength = 2048

// MaxEmailLength is RFC 5321's limit on a forward path (unit.MaxEmailLength).
const MaxEmailLength = unit.MaxEmailLength

// ValidateUser checks what a caller sets of a user, other than its id,
// naming each field under path ("owner", "user"); names are at most
// maxName characters (the Vault's bound on every name).
func ValidateUser(path string, u User, maxName int, fe unit.FieldErrors) {
	if u.Email != "" {
		unit.ValidateEmail(path+".email", u.Email, fe)
	}
	for name, s := range map[string]string{"first_name": u.FirstName, "last_name": u.LastName} {
		if utf8.RuneCountInString(s) > maxName {
			fe.Add(path+"."+name, "must be at most %d characters", maxName)
		} else {
			unit.CheckNoControl(path+"."+name, s, fe)
		}
	}
	if u.Picture != "" {
		pic, err := url.Parse(u.Picture)
		if len(u.Picture) > MaxPictureLength || err != nil || (pic.Scheme != "https" && pic.Scheme != "http") || pic.Host == "" {
			fe.Add(path+".picture", "must be an http or https URL of at most %d characters", MaxPictureLength)
		}
	}
}

// ValidateName checks a new tenant's name (at "name") and the name of its
// first management application (at "application_name"), each at most
// maxName characters, and returns the application's name: "Management"
// when appName is empty.
func ValidateName(name, appName string, maxName int, fe unit.FieldErrors) string {
	switch {
	case strings.TrimSpace(name) == "":
		fe.Add("name", "is required")
	case utf8.RuneCountInString(name) > maxName:
		fe.Add("name", "must be at most %d characters", maxName)
	default:
		unit.CheckNoControl("name", name, fe)
	}
	switch {
	case appName == "":
		appName = "Management"
	case strings.TrimSpace(appName) == "":
		fe.Add("application_name", "must not be blank; leave it out for \"Management\"")
	case utf8.RuneCountInString(appName) > maxName:
		fe.Add("application_name", "must be at most %d characters", maxName)
	default:
		unit.CheckNoControl("application_name", appName, fe)
	}
	return appName
}
