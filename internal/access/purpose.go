package access

import (
	"errors"
	"regexp"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Purposes of access.
//
// A tenant keeps a list of the purposes its data may be accessed for
// (fraud-review, chargeback, support, each with a description; the
// tenant record holds it, internal/tenants). A call names one (SVC-PURPOSE
// over HTTP, unit.WithPurpose in Go); the Authenticator checks it is on
// the list and gives it to the call's own copy of its principal
// (Principal.WithPurpose), and the rule engine applies a rule with
// purposes only to calls naming one of them (DecideFor). The purpose is
// written into the audit line of every access to token data the call
// makes.

// MaxPurposes bounds a tenant's list of purposes, and a rule's.
const MaxPurposes = 32

// MaxPurposeDescription bounds a purpose's description, in bytes.
const MaxPurposeDescription = 500

// purposeName is what a purpose is called: lower case letters, digits,
// '-', '_' and '.', starting with a letter or digit, at most 64 bytes. It
// travels in a header and an audit line, so nothing else.
var purposeName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidPurposeName reports whether name may name a purpose.
func ValidPurposeName(name string) bool { return purposeName.MatchString(name) }

// ErrPurposeRequired is the cause of PurposeRequiredError's errors
// (errors.Is finds it): code that moves a request's field errors under a
// prefix (a reactor's args, a proxy's body) leaves this one, which is
// about the call, not the document, where it is.
var ErrPurposeRequired = errors.New("a purpose of access is required")

// PurposeRequiredError is the error of a call on one token that a rule
// requiring a purpose would decide, naming none: Invalid, naming the
// field purpose.
func PurposeRequiredError() *unit.Error {
	e := unit.InvalidField("purpose", "an access rule on this token requires a purpose of access (SVC-PURPOSE): name one of the tenant's purposes")
	e.Err = ErrPurposeRequired
	return e
}

// UnknownPurposeError is the error of a call naming a purpose its
// tenant's list does not hold (or one that is no purpose's name).
func UnknownPurposeError() *unit.Error {
	return unit.InvalidField("purpose", "not one of the tenant's purposes of access")
}

// PurposeList answers whether a tenant's list of purposes holds a name
// (internal/tenants, which imports this package, keeps the list).
type PurposeList interface {
	HasPurpose(t *unit.Tx, tid, name string) (bool, error)
}

// validateRulePurposes checks a rule's purposes: names of purposes, at
// most MaxPurposes, none twice. Whether the tenant's list holds them is
// not checked here: a rule naming a purpose taken off the list applies to
// no call, which withholds rather than grants.
func validateRulePurposes(path string, purposes []string, fe unit.FieldErrors) {
	if len(purposes) > MaxPurposes {
		fe.Add(path, "at most %d purposes", MaxPurposes)
		return
	}
	seen := make(map[string]bool, len(purposes))
	for _, p := range purposes {
		switch {
		case !ValidPurposeName(p):
			fe.Add(path, "%q is not a purpose's name (lower case letters, digits, '.', '_' and '-', at most 64)", p)
		case seen[p]:
			fe.Add(path, "%q is named twice", p)
		}
		seen[p] = true
	}
}

// HasRulePurposes reports whether any of rules has purposes (a record
// then stores them, under a flag of its own).
func HasRulePurposes(rules []Rule) bool {
	for i := range rules {
		if len(rules[i].Purposes) > 0 {
			return true
		}
	}
	return false
}

// AppendRulePurposes appends the purposes of each of rules, in order, as
// a list of strings each: the part a record adds, under a flag, after
// the rules it holds when HasRulePurposes.
func AppendRulePurposes(b []byte, rules []Rule) []byte {
	for i := range rules {
		b = unit.AppendStrs(b, rules[i].Purposes)
	}
	return b
}

// ReadRulePurposes reads what AppendRulePurposes wrote into rules (which
// hold the rules read before it). An empty list reads as nil.
func ReadRulePurposes(d *unit.Reader, rules []Rule) {
	for i := range rules {
		if p := d.Strs(); len(p) > 0 {
			rules[i].Purposes = p
		}
		if d.Err() != nil {
			return
		}
	}
}
