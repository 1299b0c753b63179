package events

import (
	"slices"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestSubscribes: a name subscribes to its type, "*" to every type that
// is not high-volume.
func TestSubscribes(t *testing.T) {
	created, _ := Lookup(TokenCreated)
	read, _ := Lookup(TokenRead)
	for _, tc := range []struct {
		events []string
		et     Type
		want   bool
	}{
		{[]string{TokenCreated}, created, true},
		{[]string{"*"}, created, true},
		{[]string{"*"}, read, false},
		{[]string{TokenRead}, read, true},
		{[]string{TokenUpdated}, created, false},
	} {
		if got := Subscribes(tc.events, tc.et); got != tc.want {
			t.Errorf("Subscribes(%q, %s) = %v, want %v", tc.events, tc.et.Name, got, tc.want)
		}
	}
}

// TestEndsObject: deletions, a token's expiry, an intent's conversion and
// an invitation's acceptance end their object; a key's deletion does not.
func TestEndsObject(t *testing.T) {
	for typ, want := range map[string]bool{
		TokenDeleted: true, TokenExpired: true, TokenIntentConverted: true, TenantInvitationAccepted: true,
		ApplicationDeleted: true, ApplicationKeyDeleted: false, TokenUpdated: false, TokenPropertyExpired: false,
	} {
		if got := EndsObject(typ); got != want {
			t.Errorf("EndsObject(%q) = %v, want %v", typ, got, want)
		}
	}
}

// TestTypesIsACopy: the catalogue cannot be changed through Types, and
// every name is in it once.
func TestTypesIsACopy(t *testing.T) {
	a := Types()
	a[0].Name = "changed"
	if Types()[0].Name != TokenCreated {
		t.Fatal("Types() shares its slice")
	}
	var names []string
	for _, e := range Types() {
		if _, ok := Lookup(e.Name); !ok {
			t.Errorf("Lookup(%q) failed", e.Name)
		}
		names = append(names, e.Name)
	}
	slices.Sort(names)
	if len(slices.Compact(names)) != len(Types()) {
		t.Error("a name is in the catalogue twice")
	}
}

// TestValidateEvents: the messages of the events field.
func TestValidateEvents(t *testing.T) {
	for _, tc := range []struct {
		events []string
		want   map[string][]string
	}{
		{nil, map[string][]string{"events": {`must name one event type or more (GET /webhooks/event-types), or "*"`}}},
		{[]string{"*", TokenRead}, nil},
		{[]string{"nope"}, map[string][]string{"events[0]": {`is not an event type of the catalogue (GET /webhooks/event-types), nor "*"`}}},
		{[]string{TokenRead, TokenRead}, map[string][]string{"events[1]": {"is named twice"}}},
	} {
		fe := unit.FieldErrors{}
		ValidateEvents(tc.events, fe)
		if len(fe) != len(tc.want) {
			t.Errorf("ValidateEvents(%q) = %v, want %v", tc.events, fe, tc.want)
			continue
		}
		for path, msgs := range tc.want {
			if !slices.Equal(fe[path], msgs) {
				t.Errorf("ValidateEvents(%q)[%s] = %q, want %q", tc.events, path, fe[path], msgs)
			}
		}
	}
}
