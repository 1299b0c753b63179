package events

import "encoding/json"

// The objects events carry (Info.Data): each an API view of the entity
// with everything secret left out (docs/webhooks-events.md lists, per
// object, what is shown and what never is). The feature that owns an
// entity builds its view and emits it (unit.Event.View); the views of
// records of packages below the root are here (views_application.go).
//
// A view never holds: token data, masks or detokenized values; an
// application's key or key hash; a proxy's key, configuration values,
// transform code, or the user information, query and fragment of its
// destination URL; a reactor's code or configuration values; a session's
// key, nonce or their hashes; an invitation's link token; a token
// intent's data, nor its card summary.
//
// Views are kept within MaxViewBytes, so that an event with its envelope
// stays under MaxEventBytes: a view that would be bigger drops fields, in
// an order fixed per view (FitView), and names them in "omitted" (the
// receiver reads the object through the API for them).

// MaxViewBytes bounds an event's object as JSON: MaxEventBytes less room
// for the envelope and the actor (an id, a name of at most 200
// characters, a trace id of at most the length unit.CallInfo allows).
const MaxViewBytes = MaxEventBytes - 4<<10

// ViewDrop is a field a view may leave out (Name, as "omitted" names
// it), and how (Drop).
type ViewDrop struct {
	Name string
	Drop func()
}

// FitView drops the fields of view, in order, while its JSON is over
// MaxViewBytes, and returns the names of those it dropped.
func FitView(view any, drops []ViewDrop) []string {
	var omitted []string
	for _, d := range drops {
		b, err := json.Marshal(view)
		if err == nil && len(b) <= MaxViewBytes {
			break
		}
		d.Drop()
		omitted = append(omitted, d.Name)
	}
	return omitted
}
