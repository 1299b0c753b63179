package access

import (
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// DeniedOn is the PermissionDenied error of p's call refused perm on a
// token in tok's containers. It names those containers and, where p's
// rules grant perm elsewhere, the containers they grant it on ("the key
// lacks the permission token:read on /general/; it holds token:read on
// /pci/ only"), so that an operator sees which rule is missing. It tells
// the caller nothing it may not know: the token is one it named, and the
// rules are its own key's.
func (p *Principal) DeniedOn(perm string, tok TokenScope) *unit.Error {
	msg := "the key lacks the permission " + perm
	if len(tok.Containers) > 0 {
		msg += " on " + strings.Join(tok.Containers, ", ")
	}
	if slices.Contains(p.Permissions, perm) {
		return unit.Errorf(unit.PermissionDenied, "%s", msg)
	}
	var on []string
	for _, r := range p.Rules {
		if slices.Contains(r.Permissions, perm) && !slices.Contains(on, r.Container) {
			on = append(on, r.Container)
		}
	}
	if len(on) == 0 {
		msg += "; it holds " + perm + " on no container"
	} else {
		msg += "; it holds " + perm + " on " + strings.Join(on, ", ") + " only"
	}
	return unit.Errorf(unit.PermissionDenied, "%s", msg)
}
