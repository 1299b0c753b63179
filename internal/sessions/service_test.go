package sessions

import (
	"context"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

const (
	pubApp  = "0190f5a2-9000-7000-8000-0000000000a1"
	privApp = "0190f5a2-9000-7000-8000-0000000000a2"
)

var (
	public  = &access.Principal{TenantID: testTenant, ActorID: pubApp, ActorType: unit.ActorApplication, AppType: access.Public}
	private = &access.Principal{TenantID: testTenant, ActorID: privApp, ActorType: unit.ActorApplication, AppType: access.Private,
		Permissions: []string{access.PermTokenRead, access.PermTokenCreate}}
)

// newService is a Service on a new Work with one tenant, caps as given,
// whose applications are apps (an application missing from it is gone).
func newService(t *testing.T, perAddress, ceiling int, apps map[string]*access.ApplicationRecord) (*Service, *worktest.Work) {
	t.Helper()
	w := worktest.New(t)
	w.Tenant(t, testTenant)
	return &Service{IDs: &unit.IDSource{}, Sys: w.Sys, MaxPerAddress: perAddress, Max: ceiling,
		Application: func(_ *unit.Tx, tid, id string) (*access.ApplicationRecord, error) {
			if tid != testTenant {
				return nil, nil
			}
			return apps[id], nil
		}}, w
}

// update runs fn in a unit of work of its own.
func update(t *testing.T, w *worktest.Work, fn func(tx *unit.Tx) error) error {
	t.Helper()
	return w.Update(context.Background(), fn)
}

// principalOf authenticates key, as the Vault does: by its keyed MAC's
// lookup.
func principalOf(t *testing.T, s *Service, w *worktest.Work, key string) (*access.Principal, time.Time, error) {
	t.Helper()
	var (
		p   *access.Principal
		exp time.Time
	)
	err := w.View(context.Background(), func(tx *unit.Tx) error {
		mac := s.Sys.MAC([]byte(key))
		var ref access.KeyRef
		ok, err := tx.GetRecord(barrier.APIKeyLookup(mac), &ref)
		if err != nil || !ok {
			t.Fatalf("no lookup of the session key: %v", err)
		}
		p, exp, err = s.Principal(tx, ref, mac)
		return err
	})
	return p, exp, err
}

// TestCreateAuthorizePrincipal: a created session's key is refused until
// its nonce is authorized, once; then it acts with its grants, held to
// its authorizer's grants then and now, until the sooner of its expiry
// and its applications'.
func TestCreateAuthorizePrincipal(t *testing.T) {
	t.Parallel()
	appExpires := worktest.Start.Add(30 * time.Minute)
	apps := map[string]*access.ApplicationRecord{
		pubApp:  {ID: pubApp, TenantID: testTenant, Type: access.Public},
		privApp: {ID: privApp, TenantID: testTenant, Type: access.Private, Permissions: private.Permissions, ExpiresAt: &appExpires},
	}
	s, w := newService(t, 0, 0, apps)
	key, nonce := NewKey()
	var rec *Record
	err := update(t, w, func(tx *unit.Tx) error {
		var err error
		rec, err = s.Create(tx, public, key, nonce)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(rec.KeyHash) == key || !rec.ExpiresAt.Equal(worktest.Start.Add(Lifetime)) {
		t.Errorf("Create() = %+v, want a keyed hash and an expiry %s away", rec, Lifetime)
	}
	if ev := w.Events(); len(ev) != 1 || ev[0].Type != events.SessionCreated {
		t.Errorf("events of Create: %+v", ev)
	}
	if _, _, err := principalOf(t, s, w, key); unit.ErrorKind(err) != unit.PermissionDenied {
		t.Errorf("Principal(unauthorized) = %v, want PermissionDenied", err)
	}

	grant := access.Grants{Permissions: []string{access.PermTokenRead}}
	tooMuch := access.Grants{Permissions: []string{access.PermTokenDelete}}
	if err := update(t, w, func(tx *unit.Tx) error { return s.Authorize(tx, private, nonce, tooMuch, nil) }); unit.ErrorKind(err) != unit.PermissionDenied {
		t.Errorf("Authorize(more than the authorizer holds) = %v, want PermissionDenied", err)
	}
	expires := worktest.Start.Add(time.Hour)
	if err := update(t, w, func(tx *unit.Tx) error { return s.Authorize(tx, private, nonce, grant, &expires) }); err != nil {
		t.Fatal(err)
	}
	if err := update(t, w, func(tx *unit.Tx) error { return s.Authorize(tx, private, nonce, grant, nil) }); err == nil || err.Error() != errUnknownNonce.Error() {
		t.Errorf("Authorize(used nonce) = %v, want %v", err, errUnknownNonce)
	}
	p, until, err := principalOf(t, s, w, key)
	if err != nil {
		t.Fatal(err)
	}
	if p.ActorType != unit.ActorSession || p.AppID != privApp || !p.Has(access.PermTokenRead) || len(p.Ceilings) != 2 {
		t.Errorf("Principal() = %+v, want the session acting with its grant under two ceilings", p)
	}
	if !until.Equal(appExpires) {
		t.Errorf("Principal() works until %v, want its authorizer's expiry %v", until, appExpires)
	}
	delete(apps, privApp)
	if _, _, err := principalOf(t, s, w, key); err != unit.ErrUnauthenticatedKey {
		t.Errorf("Principal(authorizer gone) = %v, want %v", err, unit.ErrUnauthenticatedKey)
	}
}

// TestCaps: past its address's cap a creation evicts that address's
// oldest waiting session with its lookups; past the application's
// ceiling it is refused, RateLimited.
func TestCaps(t *testing.T) {
	t.Parallel()
	s, w := newService(t, 2, 2, nil)
	var first *Record
	for i := range 3 {
		key, nonce := NewKey()
		err := update(t, w, func(tx *unit.Tx) error {
			rec, err := s.Create(tx, public, key, nonce)
			if i == 0 {
				first = rec
			}
			return err
		})
		if err != nil {
			t.Fatalf("creation %d: %v", i, err)
		}
	}
	err := w.View(context.Background(), func(tx *unit.Tx) error {
		for _, k := range []barrier.Key{barrier.Tenant(testTenant).Record(unit.EntitySession, first.ID),
			barrier.APIKeyLookup(first.KeyHash), barrier.NonceLookup(first.NonceHash)} {
			if ok, err := tx.Has(k); err != nil || ok {
				t.Errorf("%s of the evicted session: still stored (%v)", k, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	evicted := false
	for _, l := range w.Lines() {
		evicted = evicted || (l.EntityID == first.ID && l.Message == msgEvicted)
	}
	if !evicted {
		t.Errorf("no line %q for the evicted session", msgEvicted)
	}
	s.MaxPerAddress = 10 // the ceiling now comes first
	key, nonce := NewKey()
	err = update(t, w, func(tx *unit.Tx) error { _, err := s.Create(tx, public, key, nonce); return err })
	if unit.ErrorKind(err) != unit.RateLimited {
		t.Errorf("a creation past the ceiling: %v, want RateLimited", err)
	}
}

// TestCheckExpiry: an authorization's expiry is in the future and at
// most MaxLifetime away.
func TestCheckExpiry(t *testing.T) {
	t.Parallel()
	now := worktest.Start
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{now, false},
		{now.Add(time.Second), true},
		{now.Add(MaxLifetime), true},
		{now.Add(MaxLifetime + time.Second), false},
	} {
		fe := unit.FieldErrors{}
		CheckExpiry(tc.at, now, fe)
		if got := fe.Err() == nil; got != tc.want {
			t.Errorf("CheckExpiry(now+%v) accepted %v, want %v", tc.at.Sub(now), got, tc.want)
		}
	}
}
