package unit

import (
	"net/mail"
	"unicode"
)

// Names, keys and ids are text a person reads in a console, a log line or a
// URL, and a key in the store's indexes: a control character in one (NUL,
// an escape, a newline) prints as nothing or moves the cursor, cuts a C
// string short in a tool reading an export, and lets two names look alike
// that are not. So every name (of tenants, applications, reactors, proxies,
// formulas and their configuration and request parameters, users' names),
// metadata key (stored or queried), custom token id and container is
// refused with a control character in it, by the one check below (every
// feature calls it); values
// (token data, metadata values, descriptions) may hold any text.

// NoControl is the field error for text holding a control character.
const NoControl = "must not contain control characters (such as NUL, tab or newline)"

// HasControl reports whether s holds a control character: Unicode's
// category Cc, that is U+0000 to U+001F, U+007F and U+0080 to U+009F.
func HasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// CheckNoControl adds NoControl at path to fe when s holds a control
// character, and reports whether it did.
func CheckNoControl(path, s string, fe FieldErrors) bool {
	if HasControl(s) {
		fe.Add(path, NoControl)
		return true
	}
	return false
}

// MaxEmailLength is RFC 5321's limit on a forward path.
const MaxEmailLength = 254

// ValidateEmail accepts a bare RFC 5322 address: "ada@example.com", not
// "Ada <ada@example.com>". It adds what is wrong to fe at path.
func ValidateEmail(path, email string, fe FieldErrors) {
	switch a, err := mail.ParseAddress(email); {
	case email == "":
		fe.Add(path, "is required")
	case len(email) > MaxEmailLength:
		fe.Add(path, "must be at most %d characters", MaxEmailLength)
	case CheckNoControl(path, email, fe):
	case err != nil || a.Name != "" || a.Address != email:
		fe.Add(path, "must be a bare e-mail address such as ada@example.com, without a display name")
	}
}
