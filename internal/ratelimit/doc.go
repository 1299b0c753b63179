// Package ratelimit is the mechanism of the Vault's limits: token buckets
// by name with bounded memory, taken from one set or two at once, the
// client address a bucket is named by, the RateLimited error that refuses
// a call, and the caps on live objects a public key may leave in the
// store. Which limits exist, who is charged and when (the principal, a
// call's CallInfo charges, Options) is the Vault's: the root's
// ratelimit.go, and the features whose objects are capped
// (internal/sessions, internal/intents).
//
// # Token buckets (Set)
//
// Every limit is a token bucket (golang.org/x/time/rate) on the clock its
// caller passes (the Vault's Options.Now), kept in this process's memory:
// Vaults that share a PostgreSQL store each apply their limits
// separately, so N instances behind a load balancer admit up to N times
// each limit.
//
// A bucket's clock only goes forward: concurrent calls read the clock at
// different moments and reach a bucket in any order, and a bucket that
// took an earlier reading as its latest would credit the same interval
// again on the next later one.
//
// Buckets not taken from for as long as a full bucket takes to refill are
// forgotten (a forgotten bucket is exactly a full one), so the memory
// they take is bounded by the names active in that window.
//
// TakeBoth takes from two sets (a key's and its tenant's) or from
// neither: a call refused by one limit is not charged to the other.
//
// # Addresses (Address)
//
// A client address names its bucket by its IPv4 address or its IPv6 /64,
// and every value that is not an IP address shares one bucket, so that a
// caller cannot make up new buckets (address.go).
//
// # Caps on live objects (MakeRoom)
//
// Unlike the buckets, the caps are counted in the store, in the
// creation's own transaction, so they hold across instances (caps.go).
//
// # Floods of lines (Flood)
//
// A Flood bounds the lines a flood of events writes per name (the
// Vault's denied calls, per tenant): a Set of buckets, and per name a
// count of the events it refused, reported once a minute (flood.go).
//
// # What it does not do
//
// It decides no policy: which limits a Vault has, whom a call charges
// (a key, its tenant, a public key per address), and that a call is
// charged once however many times its transaction runs (the Vault keeps
// the first answer in the call's CallInfo) are the caller's. It keeps no
// metrics.
package ratelimit
