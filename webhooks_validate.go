package tokenvault

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// maxWebhookURLLength bounds a webhook's URL.
const maxWebhookURLLength = 2048

// validateWebhook checks req and fills its defaults (status enabled).
// The URL is held to the outbound policy of proxies here, at creation
// and update, and again at every delivery, on the address dialled.
func (v *Vault) validateWebhook(req *WebhookRequest) error {
	fe := unit.FieldErrors{}
	validateName(req.Name, fe)
	if req.URL == "" {
		fe.Add("url", "is required")
	} else if problem := webhookURLProblem(req.URL, v.allowPrivate); problem != "" {
		fe.Add("url", "%s", problem)
	}
	validateWebhookEvents(req.Events, fe)
	switch req.Status {
	case "":
		req.Status = WebhookEnabled
	case WebhookEnabled, WebhookDisabled:
	default:
		fe.Add("status", "must be %s or %s", WebhookEnabled, WebhookDisabled)
	}
	if req.NotifyEmail != "" {
		validateNotifyEmail("notify_email", req.NotifyEmail, fe)
	}
	return fe.Err()
}

// webhookURLProblem says what is wrong with a webhook's URL, or "". It
// must be absolute, https, without credentials or fragment, with an
// ASCII host (asciiHostProblem: Unicode digits and dots are refused in
// every mode) of at most 253 bytes and a port in 1-65535 if it has one.
// Unless the Vault allows private destinations (allowPrivate: tests, a
// single host), its host must not be localhost nor an address literal
// in a loopback, private, link-local, shared or reserved range
// (publicHost), in any spelling: an IPv4 address written other than as
// four decimal numbers (2130706433, 0x7f.1, 127.1, 0177.0.0.1) is
// refused as ambiguous, since resolvers read it as an address. http is
// allowed only where the Vault allows private destinations, and then
// only to a loopback host (localhost, 127.0.0.0/8, ::1), as for a
// proxy's destination: events must not cross a network in the clear.
func webhookURLProblem(raw string, allowPrivate bool) string {
	if len(raw) > maxWebhookURLLength {
		return "must be at most " + strconv.Itoa(maxWebhookURLLength) + " characters"
	}
	u, problem := parseOutboundURL(raw)
	if problem != "" {
		return problem
	}
	host := u.Hostname()
	if problem := asciiHostProblem(host); problem != "" {
		return problem
	}
	if u.Scheme == "http" && (!allowPrivate || !loopbackHost(host)) {
		return "must be https (http only for a loopback host, where the Vault allows private destinations)"
	}
	if allowPrivate {
		return ""
	}
	if _, err := netip.ParseAddr(host); !publicHost(host) || err != nil && oddIPv4(host) {
		return "must name a public host: not localhost, nor a loopback, private, link-local or reserved address"
	}
	return ""
}

// oddIPv4 reports whether host, a name by its form (publicHost parsed no
// address in it), would be read as an IPv4 address by a resolver in the
// manner of inet_aton: its last label (a trailing dot aside) is a
// decimal, octal or hexadecimal number. No top-level domain is one.
func oddIPv4(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := strings.ToLower(labels[len(labels)-1])
	if last == "" {
		return false
	}
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		return !strings.ContainsFunc(h, func(r rune) bool { return !strings.ContainsRune("0123456789abcdef", r) })
	}
	return !strings.ContainsFunc(last, func(r rune) bool { return r < '0' || r > '9' })
}

// validateWebhookEvents checks a webhook's events: one or more, each a
// catalogue name or "*", none twice.
func validateWebhookEvents(events []string, fe unit.FieldErrors) {
	if len(events) == 0 {
		fe.Add("events", "must name one event type or more (GET /webhooks/event-types), or \"*\"")
		return
	}
	for i, e := range events {
		path := "events[" + strconv.Itoa(i) + "]"
		if _, ok := eventType(e); !ok && e != "*" {
			fe.Add(path, "is not an event type of the catalogue (GET /webhooks/event-types), nor \"*\"")
		} else if slices.Index(events, e) < i {
			fe.Add(path, "is named twice")
		}
	}
}
