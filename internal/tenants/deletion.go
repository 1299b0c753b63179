package tenants

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Deleting a tenant removes every key of it from the store, in bounded
// transactions whose progress is its DeletionState marker
// (sys/deleting/<tid>), so that the work survives a crash. The root's
// first transaction (it also signs the final audit checkpoint, which is
// not this package's) writes the marker at PhaseTenant; then each
// DeletePass, one transaction, advances it:
//
//  1. PhaseTenant: everything under tenant/<tid>/, DeleteBatch keys a pass.
//  2. PhaseLookups: the sys/ lookups (LookupPrefixes) whose sealed
//     access.KeyRef names the tenant.
//  3. PhaseSchedule: the sys/ schedule entries (SchedulePrefixes) keyed
//     <nanos>/<tid>/....
//  4. PhaseFinish: checks that nothing is left under tenant/<tid>/ (a call
//     that authenticated just before the mark may have written there; the
//     work then starts over at PhaseTenant) and removes the marker.

// DeleteBatch bounds the keys one deletion pass visits.
const DeleteBatch = 500

// Phases of a tenant deletion, in order: the values of DeletionState.Phase.
const (
	PhaseTenant   = "tenant"   // keys under tenant/<tid>/
	PhaseLookups  = "lookups"  // sys/ lookups whose access.KeyRef names the tenant
	PhaseSchedule = "schedule" // sys/ schedule entries naming the tenant
	PhaseFinish   = "finish"   // check and remove the marker
)

// LookupPrefixes are the sys/ prefixes whose values are sealed
// access.KeyRefs.
var LookupPrefixes = []barrier.Prefix{barrier.APIKeyLookups, barrier.NonceLookups, barrier.InviteLookups, barrier.ProxyLookups}

// SchedulePrefixes are the sys/ prefixes keyed <nanos>/<tid>/...: the
// expiry and cvc schedules, and the chain queue (the lines not linked yet
// are deleted with the tenant; an entry a late commit queues after this
// phase is dropped by the linker, which finds its tenant gone).
var SchedulePrefixes = []barrier.Prefix{barrier.ExpirySchedule, barrier.CVCSchedule, barrier.ChainQueue}

// Deleting reports whether tenant tid is being deleted (its marker is
// stored).
func Deleting(t *unit.Tx, tid string) (bool, error) {
	return t.Has(barrier.Tenant(tid).Deleting())
}

// DeletePass runs one pass of tenant tid's deletion in t: it reads the
// marker, deletes at most DeleteBatch keys of the current phase, and
// stores the marker's progress. It reports true when the deletion is
// complete (the marker is gone, or was never there).
//
// A pass removes application, session and lookup entries without voiding
// the auth cache: the marking transaction voided it, and no key of the
// tenant is cached since (authentication reads the marker and refuses
// them). Errors are the store's, or a plain error naming the marker when
// it cannot be read or holds an unknown phase or prefix.
func DeletePass(t *unit.Tx, tid string) (done bool, err error) {
	var st DeletionState
	found, err := t.GetPlainRecord(barrier.Tenant(tid).Deleting(), &st)
	if err != nil && found {
		return false, fmt.Errorf("tokenvault: deletion marker of tenant %s: %w", tid, err)
	}
	if err != nil {
		return false, err
	}
	if !found {
		return true, nil
	}
	switch st.Phase {
	case PhaseTenant:
		err = deleteTenantKeys(t, tid, &st)
	case PhaseLookups, PhaseSchedule:
		err = deleteSysEntries(t, tid, &st)
	case PhaseFinish:
		var finished bool
		finished, err = finishMarker(t, tid, &st)
		if err == nil && finished {
			return true, nil
		}
	default:
		return false, fmt.Errorf("tokenvault: deletion marker of tenant %s: unknown phase %q", tid, st.Phase)
	}
	if err != nil {
		return false, err
	}
	return false, t.PutPlainRecord(barrier.Tenant(tid).Deleting(), &st)
}

// deleteTenantKeys deletes up to DeleteBatch keys under tenant/<tid>/, and
// moves on to the lookups when none is left.
func deleteTenantKeys(t *unit.Tx, tid string, st *DeletionState) error {
	keys, err := scanBatch(t, barrier.Tenant(tid).All(), "")
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := t.Purge(k); err != nil {
			return err
		}
	}
	if len(keys) < DeleteBatch {
		*st = DeletionState{Phase: PhaseLookups, Prefix: LookupPrefixes[0].String()}
	}
	return nil
}

// deleteSysEntries visits up to DeleteBatch keys of the sys/ prefix being
// walked and deletes those of tenant tid, then moves to the next prefix or
// phase.
func deleteSysEntries(t *unit.Tx, tid string, st *DeletionState) error {
	prefixes, next := LookupPrefixes, PhaseSchedule
	if st.Phase == PhaseSchedule {
		prefixes, next = SchedulePrefixes, PhaseFinish
	}
	i := slices.IndexFunc(prefixes, func(p barrier.Prefix) bool { return p.String() == st.Prefix })
	if i < 0 {
		return fmt.Errorf("tokenvault: deletion marker of tenant %s: unknown prefix %q", tid, st.Prefix)
	}
	prefix := prefixes[i]
	keys, err := scanBatch(t, prefix, strings.TrimPrefix(st.After, prefix.String()))
	if err != nil {
		return err
	}
	for _, k := range keys {
		mine := false
		if st.Phase == PhaseLookups {
			var ref access.KeyRef
			// A lookup that does not open is not this tenant's to delete;
			// opening needs only the system keyring.
			if _, err := t.GetRecord(k, &ref); err == nil && ref.TenantID == tid {
				mine = true
			}
		} else {
			// <prefix><nanos>/<tid>/...
			parts := strings.SplitN(strings.TrimPrefix(k.String(), prefix.String()), "/", 3)
			mine = len(parts) == 3 && parts[1] == tid
		}
		if mine {
			if err := t.Purge(k); err != nil {
				return err
			}
		}
	}
	if len(keys) == DeleteBatch {
		st.After = keys[len(keys)-1].String()
		return nil
	}
	// This prefix is done: the next one, or the next phase.
	if i+1 < len(prefixes) {
		*st = DeletionState{Phase: st.Phase, Prefix: prefixes[i+1].String()}
		return nil
	}
	*st = DeletionState{Phase: next}
	if next == PhaseSchedule {
		st.Prefix = SchedulePrefixes[0].String()
	}
	return nil
}

// finishMarker removes the marker if nothing is left under tenant/<tid>/;
// otherwise (a write that raced the mark) the work starts over.
func finishMarker(t *unit.Tx, tid string, st *DeletionState) (bool, error) {
	left, err := scanBatch(t, barrier.Tenant(tid).All(), "")
	if err != nil {
		return false, err
	}
	if len(left) > 0 {
		*st = DeletionState{Phase: PhaseTenant}
		return false, nil
	}
	for _, k := range []barrier.Key{barrier.Tenant(tid).Deleting(), barrier.Tenant(tid).Registry(), barrier.Tenant(tid).Reseal()} {
		if err := t.Purge(k); err != nil {
			return false, err
		}
	}
	return true, nil
}

// scanBatch returns up to DeleteBatch keys under prefix after
// prefix.Key(after).
func scanBatch(t *unit.Tx, prefix barrier.Prefix, after string) ([]barrier.Key, error) {
	var keys []barrier.Key
	err := t.Scan(prefix, after, DeleteBatch, func(k barrier.Key, _ string) error {
		keys = append(keys, k)
		return nil
	})
	return keys, err
}

// MarkDeleting is the first transaction of tenant tid's deletion, in t:
// it writes the marker, has sign sign the tenant's final audit checkpoint
// (while its keyring still opens the chain), removes the tenant from the
// registry (and the count), deletes its keyring and its re-seal marker,
// and marks t auth-changed, so that the tenant's keys authenticate no
// more from its commit on. A tenant already being deleted is left as it
// is; one that is not registered is NotFound.
func MarkDeleting(t *unit.Tx, tid string, sign func() error) error {
	if deleting, err := Deleting(t, tid); err != nil || deleting {
		return err
	}
	reg, err := t.Has(barrier.Tenant(tid).Registry())
	if err != nil {
		return err
	}
	if !reg {
		return unit.NotFoundError("tenant")
	}
	if err := t.PutPlainRecord(barrier.Tenant(tid).Deleting(), &DeletionState{Phase: PhaseTenant}); err != nil {
		return err
	}
	if err := sign(); err != nil {
		return err
	}
	for _, k := range []barrier.Key{barrier.Tenant(tid).Registry(), barrier.Tenant(tid).Keyring(), barrier.Tenant(tid).Reseal()} {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	Registered(t, -1) // it was registered
	// Keys authenticate no more: void the auth cache after the commit.
	t.MarkAuthChanged()
	return nil
}

// Unfinished returns the ids of the tenants whose deletion is under way
// (their markers are stored).
func Unfinished(t *unit.Tx) ([]string, error) {
	var tids []string
	err := t.ScanKeys(barrier.DeletionMarkers, func(_ barrier.Key, tid string) error {
		tids = append(tids, tid)
		return nil
	})
	return tids, err
}
