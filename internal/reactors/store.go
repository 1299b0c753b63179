package reactors

import (
	"crypto/subtle"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Where reactors, formulas and proxies are kept: the keys of their records
// and of a proxy key's lookup are built here only, so the Vault's methods
// write and list them without knowing the key space.

// PutReactor writes rec under its tenant.
func PutReactor(t *unit.Tx, rec *Record) error {
	return t.PutRecord(barrier.Tenant(rec.TenantID).Record(unit.EntityReactor, rec.ID), rec)
}

// DeleteReactor deletes reactor id of tenant tid.
func DeleteReactor(t *unit.Tx, tid, id string) error {
	return t.Delete(barrier.Tenant(tid).Record(unit.EntityReactor, id))
}

// PutFormula writes f, an official formula when its tenant is "" (kept
// outside every tenant, as RegisterOfficialFormula makes them).
func PutFormula(t *unit.Tx, f *Formula) error {
	if f.TenantID == "" {
		return t.PutRecord(barrier.OfficialFormula(f.ID), FormulaRecordOf(f))
	}
	return t.PutRecord(barrier.Tenant(f.TenantID).Record(unit.EntityReactorFormula, f.ID), FormulaRecordOf(f))
}

// DeleteFormula deletes private formula id of tenant tid.
func DeleteFormula(t *unit.Tx, tid, id string) error {
	return t.Delete(barrier.Tenant(tid).Record(unit.EntityReactorFormula, id))
}

// PutProxy writes rec and, when withLookup (on create: the key never
// changes after), the lookup of its key.
func PutProxy(t *unit.Tx, rec *ProxyRecord, withLookup bool) error {
	if withLookup {
		ref := &access.KeyRef{TenantID: rec.TenantID, Kind: unit.EntityProxy, ID: rec.ID}
		if err := t.PutRecord(barrier.ProxyLookup(rec.KeyHash), ref); err != nil {
			return err
		}
	}
	return t.PutRecord(barrier.Tenant(rec.TenantID).Record(unit.EntityProxy, rec.ID), rec)
}

// DeleteProxy deletes rec and the lookup of its key, which stops working
// at once.
func DeleteProxy(t *unit.Tx, rec *ProxyRecord) error {
	for _, k := range []barrier.Key{barrier.Tenant(rec.TenantID).Record(unit.EntityProxy, rec.ID), barrier.ProxyLookup(rec.KeyHash)} {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// ProxyByKey finds the proxy whose key has the MAC mac, or nil: for an
// unknown key, a stale lookup entry, or a proxy of a tenant deleting
// reports is being deleted (refused like an unknown key). A store or
// decryption failure is an error, never the caller's.
func ProxyByKey(t *unit.Tx, mac []byte, deleting func(tid string) (bool, error)) (*ProxyRecord, error) {
	var ref access.KeyRef
	ok, err := t.GetRecord(barrier.ProxyLookup(mac), &ref)
	if err != nil || !ok {
		return nil, err
	}
	if gone, err := deleting(ref.TenantID); err != nil || gone {
		return nil, err
	}
	rec, err := MustProxy(t, ref.TenantID, ref.ID)
	if unit.ErrorKind(err) == unit.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(rec.KeyHash, mac) != 1 {
		return nil, nil
	}
	unit.RecordTenant(t.Ctx, rec.TenantID)
	return rec, nil
}

// ListFilter keeps the reactors or proxies of a list: with IDs, only
// these; with Name, those whose name matches it (NameMatches).
type ListFilter struct {
	IDs  []string
	Name string
}

func (f ListFilter) filtered() bool { return len(f.IDs) > 0 || f.Name != "" }

// ListReactors is one page of tenant tid's reactors, oldest first.
func ListReactors(t *unit.Tx, tid string, pg paging.Pager, f ListFilter) (*paging.Page[Reactor], error) {
	return paging.Records(t, tid, unit.EntityReactor, pg, f.filtered(), func(kv barrier.StoredValue) (*Reactor, error) {
		if len(f.IDs) > 0 && !slices.Contains(f.IDs, kv.Rest) {
			return nil, nil
		}
		var rec Record
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
			return nil, err
		}
		if f.Name != "" && !NameMatches(f.Name, rec.Name) {
			return nil, nil
		}
		var fm *Formula
		if rec.FormulaID != "" {
			var err error
			if fm, err = LoadFormula(t, tid, rec.FormulaID); err != nil {
				return nil, err
			}
		}
		return ReactorOf(&rec, fm), nil
	})
}

// ListProxies is one page of tenant tid's proxies, oldest first.
func ListProxies(t *unit.Tx, tid string, pg paging.Pager, f ListFilter) (*paging.Page[Proxy], error) {
	return paging.Records(t, tid, unit.EntityProxy, pg, f.filtered(), func(kv barrier.StoredValue) (*Proxy, error) {
		if len(f.IDs) > 0 && !slices.Contains(f.IDs, kv.Rest) {
			return nil, nil
		}
		var rec ProxyRecord
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
			return nil, err
		}
		if f.Name != "" && !NameMatches(f.Name, rec.Name) {
			return nil, nil
		}
		return ProxyOf(&rec), nil
	})
}

// CheckApplication checks that ref names a public or private application
// of tenant tid. The application an update keeps (current, the id the
// reactor or proxy has; "" on create) is not checked again: it may have
// been deleted (or have expired) since, and the reactor or proxy must
// stay editable; what acts as it (req.client, a proxy call without
// require_auth) fails until it is given another. An empty id is checked.
func CheckApplication(t *unit.Tx, tid string, ref *Ref, current string, fe unit.FieldErrors) error {
	if ref == nil || ref.ID != "" && ref.ID == current {
		return nil
	}
	app, err := access.LoadApplication(t, tid, ref.ID)
	if err != nil {
		return err
	}
	switch {
	case app == nil:
		fe.Add("application.id", "no such application")
	case app.Type == access.Management:
		fe.Add("application.id", "must be a public or private application")
	}
	return nil
}

// CheckProxyApplication checks the proxy's application (after
// ReconcileProxyApplication), naming the field the caller used; current
// is the application an update keeps, nil on create (CheckApplication).
func CheckProxyApplication(t *unit.Tx, tid string, req *ProxyRequest, current *Ref) error {
	fe := unit.FieldErrors{}
	id := ""
	if current != nil {
		id = current.ID
	}
	if err := CheckApplication(t, tid, req.Application, id, fe); err != nil {
		return err
	}
	if msgs, ok := fe["application.id"]; ok && req.ApplicationID != "" {
		delete(fe, "application.id")
		fe["application_id"] = msgs
	}
	return fe.Err()
}

// NormalizeConfiguration turns configuration values into plain JSON
// values; nil stays nil.
func NormalizeConfiguration(conf map[string]any) (map[string]any, error) {
	if conf == nil {
		return nil, nil
	}
	v, err := jsontext.Normalize(conf)
	if err != nil {
		return nil, unit.InvalidField("configuration", "must be a JSON object")
	}
	m, _ := v.(map[string]any)
	return m, nil
}
