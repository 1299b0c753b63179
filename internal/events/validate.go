package events

import (
	"slices"
	"strconv"

	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Validate checks req's url, events and status into fe, and fills the
// status's default (Enabled). The URL is held to the outbound policy p
// (outbound.Policy.ReceiverProblem) here, at creation and update, and
// again at every delivery, on the address dialled. The name and
// notify_email are the caller's to check: their rules are the Vault's,
// shared with other features.
func Validate(req *Request, p outbound.Policy, fe unit.FieldErrors) {
	if req.URL == "" {
		fe.Add("url", "is required")
	} else if problem := p.ReceiverProblem(req.URL); problem != "" {
		fe.Add("url", "%s", problem)
	}
	ValidateEvents(req.Events, fe)
	switch req.Status {
	case "":
		req.Status = Enabled
	case Enabled, Disabled:
	default:
		fe.Add("status", "must be %s or %s", Enabled, Disabled)
	}
}

// ValidateEvents checks a webhook's events into fe: one or more, each a
// catalogue name or "*", none twice.
func ValidateEvents(events []string, fe unit.FieldErrors) {
	if len(events) == 0 {
		fe.Add("events", "must name one event type or more (GET /webhooks/event-types), or \"*\"")
		return
	}
	for i, e := range events {
		path := "events[" + strconv.Itoa(i) + "]"
		if _, ok := Lookup(e); !ok && e != "*" {
			fe.Add(path, "is not an event type of the catalogue (GET /webhooks/event-types), nor \"*\"")
		} else if slices.Index(events, e) < i {
			fe.Add(path, "is named twice")
		}
	}
}
