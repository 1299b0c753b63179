package tenants

import (
	"fmt"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Purpose is one of a tenant's purposes of access: what its data may be
// read for (GDPR Art. 5(1)(b)), named by callers (SVC-PURPOSE) and by
// access rules (access.Rule.Purposes). The root names it
// tokenvault.Purpose; its JSON is the API's.
type Purpose struct {
	// Name is what callers and rules name it by: lower case letters,
	// digits, '.', '_' and '-', at most 64 (access.ValidPurposeName).
	Name string `json:"name"`
	// Description says what it is for, for the records of processing
	// (GDPR Art. 30) and for whoever reads the audit trail; at most
	// access.MaxPurposeDescription bytes.
	Description string `json:"description"`
}

// ValidatePurposes checks a tenant's list of purposes, adding what is
// wrong to fe under "purposes": at most access.MaxPurposes, each a
// purpose's name, none twice, each described.
func ValidatePurposes(list []Purpose, fe unit.FieldErrors) {
	if len(list) > access.MaxPurposes {
		fe.Add("purposes", "at most %d purposes", access.MaxPurposes)
		return
	}
	seen := make(map[string]bool, len(list))
	for i, p := range list {
		path := fmt.Sprintf("purposes[%d]", i)
		switch {
		case !access.ValidPurposeName(p.Name):
			fe.Add(path+".name", "must be lower case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64")
		case seen[p.Name]:
			fe.Add(path+".name", "another purpose is named %q", p.Name)
		}
		seen[p.Name] = true
		switch {
		case p.Description == "":
			fe.Add(path+".description", "is required")
		case len(p.Description) > access.MaxPurposeDescription:
			fe.Add(path+".description", "must be at most %d bytes", access.MaxPurposeDescription)
		case unit.HasControl(p.Description):
			fe.Add(path+".description", unit.NoControl)
		}
	}
}

// SetPurposes replaces tenant tid's list of purposes with list (which the
// caller validated: ValidatePurposes), by, in t, with an audit line
// naming them and the event tenant.purposes.updated. An empty list leaves the tenant with none. Access rules
// naming a purpose taken off the list stay as they are and apply to no
// call: a call naming it is refused as any unknown purpose is.
//
// Returns NotFound for an unknown tenant.
func SetPurposes(t *unit.Tx, by unit.Actor, tid string, list []Purpose) (*Record, error) {
	rec, err := Get(t, tid)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		list = nil
	}
	rec.Purposes = slices.Clone(list)
	now := t.Now
	rec.ModifiedAt, rec.ModifiedBy = &now, by.ID
	if err := t.PutRecord(barrier.Tenant(tid).Record(unit.EntityTenant, tid), rec); err != nil {
		return nil, err
	}
	names := make([]string, len(list))
	for i, p := range list {
		names[i] = p.Name
	}
	msg := fmt.Sprintf("Purposes of access set: %v", names)
	if len(names) == 0 {
		msg = "Purposes of access set: none"
	}
	purposes := slices.Clone(rec.Purposes)
	if purposes == nil {
		purposes = []Purpose{}
	}
	if err := t.Emit(unit.Event{TenantID: tid, Type: events.TenantPurposesUpdated, By: by, ObjectName: "tenant",
		EntityType: unit.EntityTenant, EntityID: tid, View: func() any { return &purposesView{ID: tid, Purposes: purposes} }}); err != nil {
		return nil, err
	}
	return rec, t.Log(by, tid, unit.EntityTenant, tid, unit.OpUpdate, msg)
}

// purposesView is the object of tenant.purposes.updated: the tenant's id
// and its new list.
type purposesView struct {
	ID       string    `json:"id"`
	Purposes []Purpose `json:"purposes"`
}

// PurposeList is the tenants' lists of purposes as the Authenticator reads
// them (access.PurposeList): one read of the tenant's record.
type PurposeList struct{}

// HasPurpose reports whether tenant tid's list holds name.
func (PurposeList) HasPurpose(t *unit.Tx, tid, name string) (bool, error) {
	rec, err := Get(t, tid)
	if err != nil {
		if unit.ErrorKind(err) == unit.NotFound {
			return false, nil
		}
		return false, err
	}
	return slices.ContainsFunc(rec.Purposes, func(p Purpose) bool { return p.Name == name }), nil
}

var _ access.PurposeList = PurposeList{}
