package ratelimit

import "net/netip"

// notAnIP is the one bucket of every client address that is not an IP
// address: such values are not addresses, so a caller that makes them up
// must not get a new bucket with each.
const notAnIP = "not-an-ip"

// Address is the name of the bucket that the client address addr (as a
// call's unit.CallInfo.ClientAddress gives it) is throttled in (failed
// authentications, sessions per address, a public key's calls) and capped
// by (live objects per address):
//
//   - an IPv4 address as written ("192.0.2.7"; an IPv4-mapped IPv6
//     address, with or without a port, is the same address);
//   - an IPv6 address as its /64 network, which one subscriber is
//     usually given whole, so that one host cannot take 2^64 buckets;
//   - anything else, all together as one bucket: a made-up value
//     ("not-an-ip-7") is never a new address;
//   - "" (an in-process caller) as itself.
func Address(addr string) string {
	if addr == "" {
		return ""
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		ap, perr := netip.ParseAddrPort(addr)
		if perr != nil {
			return notAnIP
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
