package outbound

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxReceiverURLLength bounds a receiver's URL (a webhook's url).
const MaxReceiverURLLength = 2048

// ParseURL parses the URL of a proxy's destination or a webhook and says
// what is wrong with its shape, or "": it must be absolute, http or
// https, without credentials or fragment, with a host of at most 253
// bytes and a port in 1-65535 if it has one. Which scheme and hosts are
// allowed is the caller's policy (DestinationProblem, ReceiverProblem).
func ParseURL(raw string) (*url.URL, string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, "must be an absolute https URL"
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, "must not hold credentials (user@) or a fragment (#)"
	}
	if host := u.Hostname(); host == "" || len(host) > 253 {
		return nil, "must name a host of at most 253 characters"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, "must have a port from 1 to 65535"
		}
	}
	return u, ""
}

// httpProblem is the answer to an http URL the policy does not take.
const httpProblem = "must be https (http only for a loopback host, where the Vault allows private destinations)"

// DestinationProblem says what is wrong with a proxy's destination URL,
// or "". It must have ParseURL's shape, and be https: detokenized data
// goes there, and must not cross a network in the clear. http is allowed
// only for a loopback host (localhost, 127.0.0.0/8, ::1), and only when
// p.AllowPrivate, where nothing leaves the machine. Its host is checked
// when it is dialled (Client), not here.
func (p Policy) DestinationProblem(raw string) string {
	u, problem := ParseURL(raw)
	if problem != "" {
		return problem
	}
	if u.Scheme == "http" && (!p.AllowPrivate || !LoopbackHost(u.Hostname())) {
		return httpProblem
	}
	return ""
}

// ReceiverProblem says what is wrong with the URL of a receiver the
// Vault posts to on its own (a webhook), or "". It must be at most
// MaxReceiverURLLength bytes, have ParseURL's shape and an ASCII host
// (ASCIIHostProblem: Unicode digits and dots are refused in every mode),
// and be https, as for DestinationProblem. Unless p.AllowPrivate, its
// host must not be localhost nor an address literal in a loopback,
// private, link-local, shared or reserved range (PublicHost), in any
// spelling: an IPv4 address written other than as four decimal numbers
// (2130706433, 0x7f.1, 127.1, 0177.0.0.1) is refused as ambiguous, since
// resolvers read it as an address (OddIPv4). It is checked at creation,
// and again before every delivery, since a receiver stored under a laxer
// policy must not reach inward.
func (p Policy) ReceiverProblem(raw string) string {
	if len(raw) > MaxReceiverURLLength {
		return "must be at most " + strconv.Itoa(MaxReceiverURLLength) + " characters"
	}
	u, problem := ParseURL(raw)
	if problem != "" {
		return problem
	}
	host := u.Hostname()
	if problem := ASCIIHostProblem(host); problem != "" {
		return problem
	}
	if u.Scheme == "http" && (!p.AllowPrivate || !LoopbackHost(host)) {
		return httpProblem
	}
	if p.AllowPrivate {
		return ""
	}
	if _, err := netip.ParseAddr(host); !PublicHost(host) || err != nil && OddIPv4(host) {
		return "must name a public host: not localhost, nor a loopback, private, link-local or reserved address"
	}
	return ""
}
