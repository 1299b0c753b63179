package intents

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
	other   = "0190f5a2-9000-7000-8000-0000000000a3"
)

var (
	public  = &access.Principal{TenantID: testTenant, ActorID: pubApp, ActorType: unit.ActorApplication, AppType: access.Public}
	private = &access.Principal{TenantID: testTenant, ActorID: privApp, ActorType: unit.ActorApplication, AppType: access.Private,
		Permissions: []string{access.PermTokenCreate}}
	card = New{Type: unit.TypeCard, Data: []byte(`{"expiration_month":12,"expiration_year":2035,"number":"4242424242424242"}`),
		Fingerprint: "fp"}
)

// newService is a Service on a new Work with one tenant, caps as given.
func newService(t *testing.T, perAddress, ceiling int) (*Service, *worktest.Work) {
	t.Helper()
	w := worktest.New(t)
	w.Tenant(t, testTenant)
	return &Service{IDs: &unit.IDSource{}, Sys: w.Sys, Lifetime: DefaultLifetime, MaxPerAddress: perAddress, Max: ceiling}, w
}

// create creates n as p in a unit of work of its own.
func create(t *testing.T, s *Service, w *worktest.Work, p *access.Principal, n New) (*Record, error) {
	t.Helper()
	var rec *Record
	err := w.Update(context.Background(), func(tx *unit.Tx) error {
		var err error
		rec, err = s.Create(tx, p, n)
		return err
	})
	return rec, err
}

// stored reads the intent id and counts its index entries.
func stored(t *testing.T, w *worktest.Work, id string) (rec *Record, entries int) {
	t.Helper()
	err := w.View(context.Background(), func(tx *unit.Tx) error {
		var err error
		if rec, err = Get(tx, testTenant, id); err != nil {
			return err
		}
		return tx.Scan(barrier.Tenant(testTenant).ByCreator(barrier.TokenIntentCaps, pubApp), "", 0, func(k barrier.Key, rest string) error {
			entries++
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec, entries
}

// TestCreateOwnDelete: an intent is created with its lifetime, its
// creator finds it and another key is told NotFound, as for an unknown
// id, while a key with neither the permission nor the right to create is
// refused before the lookup; deleting removes the record and its caps'
// entries, with the event and line of each step.
func TestCreateOwnDelete(t *testing.T) {
	t.Parallel()
	s, w := newService(t, 0, 0)
	rec, err := create(t, s, w, public, card)
	if err != nil {
		t.Fatal(err)
	}
	if want := worktest.Start.Add(DefaultLifetime); !rec.ExpiresAt.Equal(want) || rec.CreatedBy != pubApp || rec.CreatedFrom == "" {
		t.Errorf("Create() = %+v, want expiry %v, created by %s from an address", rec, want, pubApp)
	}
	if ev := w.Events(); len(ev) != 1 || ev[0].Type != events.TokenIntentCreated || ev[0].EntityID != rec.ID {
		t.Errorf("events of Create: %+v, want one %s", ev, events.TokenIntentCreated)
	}
	if l := w.Lines(); len(l) != 1 || l[0].Operation != unit.OpCreate || l[0].Message != "Token intent created" {
		t.Errorf("lines of Create: %+v", l)
	}
	stranger := &access.Principal{TenantID: testTenant, ActorID: other, ActorType: unit.ActorApplication, AppType: access.Public}
	noRight := &access.Principal{TenantID: testTenant, ActorID: other, ActorType: unit.ActorApplication, AppType: access.Private}
	err = w.Update(context.Background(), func(tx *unit.Tx) error {
		if got, err := Own(tx, public, rec.ID, access.PermTokenIntentRead); err != nil || got.ID != rec.ID {
			t.Errorf("Own(creator) = %v, %v", got, err)
		}
		for _, id := range []string{rec.ID, other, "not-an-id"} {
			if _, err := Own(tx, stranger, id, access.PermTokenIntentRead); err != ErrNotFound {
				t.Errorf("Own(stranger, %q) = %v, want ErrNotFound", id, err)
			}
		}
		if _, err := Own(tx, noRight, rec.ID, access.PermTokenIntentRead); unit.ErrorKind(err) != unit.PermissionDenied {
			t.Errorf("Own(no right) = %v, want PermissionDenied", err)
		}
		return Delete(tx, public.Actor(), rec, "Token intent deleted")
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, entries := stored(t, w, rec.ID); got != nil || entries != 0 {
		t.Errorf("after Delete: record %v, %d index entries; want none", got, entries)
	}
	if ev := w.Events(); len(ev) != 1 || ev[0].Type != events.TokenIntentDeleted {
		t.Errorf("events of Delete: %+v", ev)
	}
	if l := w.Lines(); len(l) != 1 || l[0].Operation != unit.OpDelete || l[0].Message != "Token intent deleted" {
		t.Errorf("lines of Delete: %+v", l)
	}
}

// TestExpiredIsNotFound: an intent is NotFound from the instant it
// expires, though its record stays for the sweeper.
func TestExpiredIsNotFound(t *testing.T) {
	t.Parallel()
	s, w := newService(t, 0, 0)
	at := worktest.Start.Add(time.Minute)
	rec, err := create(t, s, w, public, New{Type: card.Type, Data: card.Data, ExpiresAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	w.Advance(time.Minute)
	err = w.View(context.Background(), func(tx *unit.Tx) error {
		if _, err := Live(tx, testTenant, rec.ID); err != ErrNotFound {
			t.Errorf("Live(expired) = %v, want ErrNotFound", err)
		}
		if got, err := Get(tx, testTenant, rec.ID); err != nil || got == nil {
			t.Errorf("Get(expired) = %v, %v; want the record", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCaps: past its address's cap a creation evicts that address's
// oldest intent (logged as evicted); past the creator's ceiling it is
// refused, RateLimited, and nothing is evicted.
func TestCaps(t *testing.T) {
	t.Parallel()
	s, w := newService(t, 2, 2)
	first, err := create(t, s, w, public, card)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := create(t, s, w, public, card); err != nil {
		t.Fatal(err)
	}
	w.Lines()
	if _, err := create(t, s, w, public, card); err != nil {
		t.Fatalf("a creation at its address's cap: %v, want the oldest evicted", err)
	}
	if got, _ := stored(t, w, first.ID); got != nil {
		t.Errorf("the oldest intent %s is still stored past its address's cap", first.ID)
	}
	if l := w.Lines(); len(l) != 2 || l[0].Message != msgEvicted || l[0].EntityID != first.ID {
		t.Errorf("lines of the evicting creation: %+v, want the eviction's first", l)
	}

	s.MaxPerAddress = 10 // the ceiling now comes first
	_, err = create(t, s, w, public, card)
	if unit.ErrorKind(err) != unit.RateLimited {
		t.Fatalf("a creation past the ceiling: %v, want RateLimited", err)
	}
	if _, entries := stored(t, w, ""); entries != 2 {
		t.Errorf("%d intents indexed after a refused creation, want 2", entries)
	}
}

// TestConvert: only a private application converts; a conversion whose
// token is made removes the intent, emits converted with the token's id
// and logs an update, and one whose token fails leaves the intent.
func TestConvert(t *testing.T) {
	t.Parallel()
	s, w := newService(t, 0, 0)
	rec, err := create(t, s, w, public, card)
	if err != nil {
		t.Fatal(err)
	}
	w.Events()
	w.Lines()
	convert := func(p *access.Principal, makeToken func(*Record) (string, error)) error {
		return w.Update(context.Background(), func(tx *unit.Tx) error { return Convert(tx, p, rec.ID, makeToken) })
	}
	never := func(*Record) (string, error) { t.Error("a token made for a refused conversion"); return "", nil }
	if err := convert(public, never); unit.ErrorKind(err) != unit.PermissionDenied {
		t.Errorf("Convert(public) = %v, want PermissionDenied", err)
	}
	failed := unit.Errorf(unit.Invalid, "bad")
	if err := convert(private, func(*Record) (string, error) { return "", failed }); err != failed {
		t.Errorf("Convert(failing token) = %v, want its error", err)
	}
	if got, _ := stored(t, w, rec.ID); got == nil {
		t.Fatal("a failed conversion removed the intent")
	}
	err = convert(private, func(r *Record) (string, error) {
		if string(r.Data) != string(card.Data) {
			t.Errorf("the token is made of %s, want the intent's data", r.Data)
		}
		return "tok-1", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, entries := stored(t, w, rec.ID); got != nil || entries != 0 {
		t.Errorf("after Convert: record %v, %d index entries; want none", got, entries)
	}
	ev := w.Events()
	if len(ev) != 1 || ev[0].Type != events.TokenIntentConverted || ev[0].View().(*event).TokenID != "tok-1" {
		t.Errorf("events of Convert: %+v, want %s with the token's id", ev, events.TokenIntentConverted)
	}
	if l := w.Lines(); len(l) != 1 || l[0].Operation != unit.OpUpdate || l[0].Message != msgConverted {
		t.Errorf("lines of Convert: %+v", l)
	}
	if err := convert(private, never); err != ErrNotFound {
		t.Errorf("a second Convert = %v, want ErrNotFound", err)
	}
}

// TestCheckExpressions: a conversion's own expressions need token:create
// with the reveal transform where the token goes.
func TestCheckExpressions(t *testing.T) {
	t.Parallel()
	revealer := &access.Principal{TenantID: testTenant, ActorType: unit.ActorApplication, AppType: access.Private,
		Rules: []access.Rule{{Permissions: []string{access.PermTokenCreate}, Container: "/", Transform: access.TransformReveal}}}
	masked := &access.Principal{TenantID: testTenant, ActorType: unit.ActorApplication, AppType: access.Private,
		Rules: []access.Rule{{Permissions: []string{access.PermTokenCreate}, Container: "/", Transform: access.TransformMask}}}
	for _, tc := range []struct {
		name string
		p    *access.Principal
		want error
	}{
		{"reveal rule", revealer, nil},
		{"mask rule", masked, ErrExpressionsOverData},
		{"direct permission (masked)", private, ErrExpressionsOverData},
		{"none", &access.Principal{ActorType: unit.ActorApplication, AppType: access.Private}, ErrExpressionsOverData},
	} {
		if got := CheckExpressions(tc.p, []string{"/pci"}); got != tc.want {
			t.Errorf("CheckExpressions(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
