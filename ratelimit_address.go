package tokenvault

import "net/netip"

// notAnIP is the one throttle bucket of every client address that is not
// an IP address: such values are not addresses, so a caller that makes
// them up must not get a new bucket with each.
const notAnIP = "not-an-ip"

// throttleAddress is the name of the bucket that [CallInfo].ClientAddress
// addr is throttled in (failed authentications, sessions per address):
//
//   - an IPv4 address as written ("192.0.2.7"; an IPv4-mapped IPv6
//     address, with or without a port, is the same address);
//   - an IPv6 address as its /64 network, which one subscriber is
//     usually given whole, so that one host cannot take 2^64 buckets;
//   - anything else, all together as one bucket: a made-up value
//     ("not-an-ip-7") is never a new address;
//   - "" (an in-process caller) as itself.
func throttleAddress(addr string) string {
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
