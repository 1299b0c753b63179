package access

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// countingLimits records the calls the Authenticator charges and the
// failures it counts; AuthFailed answers fail when it is set.
type countingLimits struct {
	mu       sync.Mutex
	charged  []string // the tenants of the charged principals
	failures []error
	fail     error
}

func (l *countingLimits) ChargeCall(_ context.Context, mac []byte, p *Principal, _ time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.charged = append(l.charged, p.TenantID)
	return nil
}

func (l *countingLimits) AuthFailed(_ context.Context, failure error, _ time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures = append(l.failures, failure)
	if l.fail != nil {
		return l.fail
	}
	return failure
}

// noSessions knows no session key.
type noSessions struct{}

func (noSessions) Principal(*unit.Tx, KeyRef, []byte) (*Principal, time.Time, error) {
	return nil, time.Time{}, unit.ErrUnauthenticatedKey
}

// recordedEvents records the application events it is asked to emit, as
// "<what> <id>".
type recordedEvents struct {
	mu  sync.Mutex
	got []string
}

func (e *recordedEvents) add(s string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, s)
	return nil
}

func (e *recordedEvents) Created(_ *unit.Tx, _ unit.Actor, r *ApplicationRecord) error {
	return e.add("created " + r.ID)
}
func (e *recordedEvents) Updated(_ *unit.Tx, _ unit.Actor, r *ApplicationRecord) error {
	return e.add("updated " + r.ID)
}
func (e *recordedEvents) Deleted(_ *unit.Tx, _ unit.Actor, r *ApplicationRecord) error {
	return e.add("deleted " + r.ID)
}
func (e *recordedEvents) KeyRegenerated(_ *unit.Tx, _ unit.Actor, r *ApplicationRecord, old []byte) error {
	if len(old) == 0 || string(old) == string(r.KeyHash) {
		return errors.New("KeyRegenerated without a new key")
	}
	return e.add("key " + r.ID)
}

// keyFixture is a Work with tenant appTenant registered, and the
// Applications and Authenticator of one Vault over it.
type keyFixture struct {
	w      *worktest.Work
	apps   *Applications
	events *recordedEvents
	limits *countingLimits
	auth   *Authenticator
}

func newKeyFixture(t *testing.T) *keyFixture {
	t.Helper()
	f := &keyFixture{w: putApplications(t), events: &recordedEvents{}, limits: &countingLimits{}}
	f.apps = &Applications{Sys: f.w.Sys, Events: f.events}
	f.auth = &Authenticator{Sys: f.w.Sys, Cache: NewAuthCache[*Principal](true, 10), Limits: f.limits,
		Sessions: noSessions{}, Now: f.w.Now}
	return f
}

// manager is a full manager of appTenant, as a key authenticates it.
func manager() *Principal {
	return AppPrincipal(&ApplicationRecord{ID: appA, TenantID: appTenant, Name: "m", Type: Management,
		Permissions: PermissionsFor(Management)})
}

// update runs fn in one write transaction of f's Work, then moves the
// cache's generation on, as the Vault's units of work do after a commit
// that changed a key (unit.Options.IdentitiesChanged; worktest's does
// nothing).
func (f *keyFixture) update(t *testing.T, fn func(tx *unit.Tx) error) error {
	t.Helper()
	err := f.w.Update(context.Background(), fn)
	f.auth.Cache.Invalidate()
	return err
}

// authenticate authenticates key in a read transaction.
func (f *keyFixture) authenticate(t *testing.T, key string) (*Principal, error) {
	t.Helper()
	var p *Principal
	err := f.w.View(context.Background(), func(tx *unit.Tx) error {
		var err error
		p, err = f.auth.Authenticate(tx, key)
		return err
	})
	return p, err
}

// TestApplicationKeys: a created application's key authenticates as the
// application; a regenerated key replaces the old one at once; a deleted
// application's key is refused. Each change emits its event and writes
// its log line.
func TestApplicationKeys(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	key := unit.NewAPIKey()
	var rec *ApplicationRecord
	err := f.update(t, func(tx *unit.Tx) error {
		var err error
		rec, err = f.apps.Create(tx, manager(), appB, key, Private, Grant{Name: "backend", Permissions: []string{PermTokenCreate}, Rules: []Rule{}}, nil, unit.FieldErrors{})
		return err
	})
	if err != nil {
		t.Fatalf("Create = %v", err)
	}
	if rec.TenantID != appTenant || rec.CreatedBy != appA || !rec.CreatedAt.Equal(worktest.Start) {
		t.Errorf("Create = %+v, want tenant %s, created by %s at %v", rec, appTenant, appA, worktest.Start)
	}
	p, err := f.authenticate(t, key)
	if err != nil || p.ActorID != appB || p.ActorType != unit.ActorApplication || p.AppType != Private {
		t.Fatalf("Authenticate(new key) = %+v, %v, want application %s", p, err, appB)
	}

	newKey := unit.NewAPIKey()
	if err := f.update(t, func(tx *unit.Tx) error {
		_, err := f.apps.Regenerate(tx, manager(), appB, newKey)
		return err
	}); err != nil {
		t.Fatalf("Regenerate = %v", err)
	}
	if _, err := f.authenticate(t, key); unit.ErrorKind(err) != unit.Unauthenticated {
		t.Errorf("Authenticate(old key) = %v, want Unauthenticated", err)
	}
	if p, err := f.authenticate(t, newKey); err != nil || p.ActorID != appB {
		t.Errorf("Authenticate(regenerated key) = %+v, %v, want application %s", p, err, appB)
	}

	if err := f.update(t, func(tx *unit.Tx) error {
		_, err := f.apps.Replace(tx, manager(), appB, Grant{Name: "renamed", Permissions: []string{PermTokenRead}, Rules: []Rule{}}, unit.FieldErrors{})
		return err
	}); err != nil {
		t.Fatalf("Replace = %v", err)
	}
	if err := f.update(t, func(tx *unit.Tx) error { return f.apps.Delete(tx, manager(), appB) }); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	if _, err := f.authenticate(t, newKey); unit.ErrorKind(err) != unit.Unauthenticated {
		t.Errorf("Authenticate(deleted application's key) = %v, want Unauthenticated", err)
	}
	if err := f.update(t, func(tx *unit.Tx) error { return f.apps.Delete(tx, manager(), appB) }); unit.ErrorKind(err) != unit.NotFound {
		t.Errorf("Delete(deleted) = %v, want NotFound", err)
	}

	wantEvents := []string{"created " + appB, "key " + appB, "updated " + appB, "deleted " + appB}
	if strings.Join(f.events.got, "|") != strings.Join(wantEvents, "|") {
		t.Errorf("events = %q, want %q", f.events.got, wantEvents)
	}
	var msgs []string
	for _, l := range f.w.Lines() {
		msgs = append(msgs, l.Message)
	}
	wantLines := []string{`Application "backend" created`, "Application key regenerated", `Application "renamed" updated`, "Application deleted"}
	if strings.Join(msgs, "|") != strings.Join(wantLines, "|") {
		t.Errorf("log lines = %q, want %q", msgs, wantLines)
	}
}

// TestApplicationsRefuse: a management application is given only
// permissions its creator holds, a bad expiry is a field error, and a
// management key is regenerated only by a key holding all its
// permissions.
func TestApplicationsRefuse(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	weak := &Principal{TenantID: appTenant, ActorID: appC, ActorType: unit.ActorApplication, AppType: Management,
		Permissions: []string{PermApplicationCreate, PermApplicationUpdate}}
	past := worktest.Start.Add(-time.Hour)
	cases := []struct {
		name string
		fn   func(tx *unit.Tx) error
		want unit.Kind
	}{
		{"management beyond the caller's permissions", func(tx *unit.Tx) error {
			_, err := f.apps.Create(tx, weak, appB, unit.NewAPIKey(), Management, Grant{Name: "m", Permissions: []string{PermLogRead}, Rules: []Rule{}}, nil, unit.FieldErrors{})
			return err
		}, unit.PermissionDenied},
		{"expiry in the past", func(tx *unit.Tx) error {
			_, err := f.apps.Create(tx, manager(), appB, unit.NewAPIKey(), Private, Grant{Name: "p", Permissions: []string{}, Rules: []Rule{}}, &past, unit.FieldErrors{})
			return err
		}, unit.Invalid},
		{"field errors found before", func(tx *unit.Tx) error {
			fe := unit.FieldErrors{}
			fe.Add("name", "is required")
			_, err := f.apps.Create(tx, manager(), appB, unit.NewAPIKey(), Private, Grant{Permissions: []string{}, Rules: []Rule{}}, nil, fe)
			return err
		}, unit.Invalid},
		{"regenerate a stronger management key", func(tx *unit.Tx) error {
			m := fullManager(appB)
			m.TenantID = appTenant
			if err := f.apps.Write(tx, manager().Actor(), m, unit.NewAPIKey()); err != nil {
				return err
			}
			_, err := f.apps.Regenerate(tx, weak, appB, unit.NewAPIKey())
			return err
		}, unit.PermissionDenied},
		{"replace an unknown application", func(tx *unit.Tx) error {
			_, err := f.apps.Replace(tx, manager(), appC, Grant{Name: "x", Permissions: []string{}, Rules: []Rule{}}, unit.FieldErrors{})
			return err
		}, unit.NotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := f.update(t, tc.fn); unit.ErrorKind(err) != tc.want {
				t.Errorf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

// TestAuthenticateFailures: every failure is the one Unauthenticated
// error, counted against the caller's address; the throttle's answer is
// what the caller gets; a key that authenticates is charged, from the
// cache too.
func TestAuthenticateFailures(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	key := unit.NewAPIKey()
	if err := f.update(t, func(tx *unit.Tx) error {
		return f.apps.Write(tx, manager().Actor(), &ApplicationRecord{ID: appB, TenantID: appTenant, Name: "b", Type: Private,
			Permissions: []string{}, Rules: []Rule{}}, key)
	}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", strings.Repeat("k", MaxKeyLength+1), unit.NewAPIKey()} {
		if _, err := f.authenticate(t, bad); err != unit.ErrUnauthenticatedKey {
			t.Errorf("Authenticate(%.12q) = %v, want %v", bad, err, unit.ErrUnauthenticatedKey)
		}
	}
	if len(f.limits.failures) != 3 {
		t.Errorf("failures counted = %d, want 3", len(f.limits.failures))
	}
	throttled := unit.Errorf(unit.RateLimited, "too many failures")
	f.limits.fail = throttled
	if _, err := f.authenticate(t, unit.NewAPIKey()); err != throttled {
		t.Errorf("Authenticate(unknown, throttled) = %v, want %v", err, throttled)
	}
	f.limits.fail = nil

	for range 2 {
		if _, err := f.authenticate(t, key); err != nil {
			t.Fatalf("Authenticate(key) = %v", err)
		}
	}
	if f.auth.Cache.Len() != 1 || len(f.limits.charged) != 2 {
		t.Errorf("cache entries = %d, calls charged = %d; want 1 and 2", f.auth.Cache.Len(), len(f.limits.charged))
	}

	// A tenant being deleted: its keys, and its applications acting for
	// code, are refused.
	if err := f.update(t, func(tx *unit.Tx) error {
		return tx.PutPlainRecord(barrier.Tenant(appTenant).Deleting(), plainMarker{})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.authenticate(t, key); unit.ErrorKind(err) != unit.Unauthenticated {
		t.Errorf("Authenticate(key of a tenant being deleted) = %v, want Unauthenticated", err)
	}
	err := f.w.View(context.Background(), func(tx *unit.Tx) error {
		_, err := AsApplication(tx, appTenant, appB)
		return err
	})
	if unit.ErrorKind(err) != unit.Unauthenticated {
		t.Errorf("AsApplication(tenant being deleted) = %v, want Unauthenticated", err)
	}
}

// TestAsApplication: an application acts for code with its own grants;
// an unknown or expired one is Unauthenticated.
func TestAsApplication(t *testing.T) {
	t.Parallel()
	expires := worktest.Start.Add(time.Minute)
	w := putApplications(t,
		&ApplicationRecord{ID: appA, Name: "a", Type: Private, Permissions: []string{PermTokenRead},
			Rules: []Rule{{Priority: 2, Container: "/b"}, {Priority: 1, Container: "/a"}}},
		&ApplicationRecord{ID: appB, Name: "b", Type: Private, ExpiresAt: &expires})
	w.Advance(time.Minute)
	err := w.View(context.Background(), func(tx *unit.Tx) error {
		p, err := AsApplication(tx, appTenant, appA)
		if err != nil {
			return err
		}
		if p.ActorID != appA || !p.Has(PermTokenRead) || p.Rules[0].Container != "/a" {
			t.Errorf("AsApplication(%s) = %+v, want its grants, rules by priority", appA, p)
		}
		for _, id := range []string{appB, appC, "not-an-id"} {
			if _, err := AsApplication(tx, appTenant, id); unit.ErrorKind(err) != unit.Unauthenticated {
				t.Errorf("AsApplication(%s) = %v, want Unauthenticated", id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// plainMarker stands for a tenant's deletion marker (internal/tenants'
// DeletionState, which imports this package): authentication only asks
// whether one is stored.
type plainMarker struct{}

func (plainMarker) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) { return append(b, 1), nil }
func (plainMarker) DecodeRecord(barrier.Key, []byte) error               { return nil }
