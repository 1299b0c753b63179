// Package outbound is the Vault's policy for talking to destinations a
// tenant names: webhooks' receivers, proxies' destinations, reactors'
// fetch and callback URLs, and the addresses notices are e-mailed to.
//
// It owns the HTTP client those calls go through ([Policy.Client]), the
// rules on the shape of such URLs ([ParseURL], [Policy.DestinationProblem],
// [Policy.ReceiverProblem]), which addresses are on the public internet
// ([PublicAddr], [PublicHost]), the path of a proxied call
// ([CheckProxyPath], [ProxyTarget]), the domain and spelling of a
// notification address ([MailboxProblem]), and the mechanics of retrying
// a receiver ([RetryAfter], [Jitter], [TransportError]). It imports
// nothing of the Vault: the root passes a [Policy] built from its Options
// and keeps the decisions that belong to a feature (which field a problem
// is reported on, which messages a proxy or a fetch gives).
//
// # What is refused, and why
//
// Unless [Policy.AllowPrivate] (tests, a single machine), the client
// refuses to connect to an address that is not on the public internet:
// loopback, private (RFC 1918, fc00::/7), link-local (cloud metadata at
// 169.254.169.254 among them), multicast, unspecified, shared address
// space (100.64.0.0/10), IETF protocol assignments, benchmarking,
// reserved and documentation ranges, and an IPv6 address that carries
// one of these as an IPv4 address (mapped, compatible, NAT64, 6to4), since
// a gateway reaches the IPv4 address for it. The check is made on the
// address actually dialled, after DNS, so a public name that resolves
// inward is refused too; the environment's proxy settings are ignored,
// since a proxy would dial in the client's place. Redirects are never
// followed. For a receiver's URL ([Policy.ReceiverProblem]) the same
// rules are applied earlier, on its spelling, so a tenant hears of a
// refused host when it saves it: "localhost", address literals of the
// refused ranges, IPv4 addresses spelt the way inet_aton reads them
// (2130706433, 0x7f.1, 127.1), and non-ASCII hosts, which IDNA would fold
// to another name or to an address ("127.0.0.①"); a proxy's destination
// is held to its shape and scheme and checked at dial.
//
// http (rather than https) is taken only for a loopback host, and only
// where private destinations are allowed: data sent to a tenant's
// destination must not cross a network in the clear.
//
// # What it does not do
//
// It resolves no name itself (the dialer checks what a name resolves to,
// at each connection), retries nothing (the caller schedules attempts
// with [RetryAfter] and [Jitter]), and reads no Options: a zero [Policy]
// is the strict one. It never logs, and never puts in an error or a message, a URL or the
// transport's own text: a URL's query or path may hold a credential of
// the tenant's, and the transport's errors name the Vault's network (its
// resolver's address, its own address). Every message is from a closed
// vocabulary, and errors it returns (unit errors, Invalid) quote nothing
// of the destination.
package outbound
