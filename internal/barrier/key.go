package barrier

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"time"
)

// Key is a key of the store as the constructors of this package build it
// (system.go, tenant.go). It carries what the transaction needs to know
// about the key and must never learn by parsing it: the tenant whose
// keyring seals the value ("" for the system keyring), and whether
// writing or deleting it can change what an API or session key
// authenticates as (the Vault voids its auth cache after such a
// transaction). The bytes are the on-disk key, unchanged from before the
// type existed. Its fields are unexported: no package above builds one
// by hand.
type Key struct {
	s      string
	tenant string
	auth   bool
	// counted is the kind of a record whose tenant keeps a count of
	// them (CountedKinds): the transaction counts the record when it is
	// first written and when it is deleted (Tx.SealPut, Tx.Delete).
	counted string
}

// String is the key as stored.
func (k Key) String() string { return k.s }

// Tenant is the tenant whose keyring seals the value at k: "" for the
// system keyring, and for the keyrings and index entries, which are not
// sealed.
func (k Key) Tenant() string { return k.tenant }

// Prefix is the common prefix of a family of keys: scans take one, and
// the keys they find are built from it (Key), so they carry its tenant and
// auth flag without being parsed.
type Prefix struct {
	s       string
	tenant  string
	auth    bool
	counted string
}

// String is the prefix as stored.
func (p Prefix) String() string { return p.s }

// Key is the key of p followed by rest.
func (p Prefix) Key(rest string) Key {
	return Key{p.s + rest, p.tenant, p.auth, p.counted}
}

// found is the key k, which a scan of p found (so k begins with p), and
// what follows p in it: one string for both, as scans return many.
func (p Prefix) Found(k []byte) (key Key, rest string) {
	s := string(k)
	return Key{s, p.tenant, p.auth, p.counted}, s[len(p.s):]
}

// Sub is the narrower prefix of p followed by rest.
func (p Prefix) Sub(rest string) Prefix {
	return Prefix{p.s + rest, p.tenant, p.auth, p.counted}
}

// IndexEntry is an index or schedule entry named by the list a record
// keeps of its own entries (a token's Indexes): empty, so never sealed,
// and never read by authentication.
func IndexEntry(k string) Key { return Key{s: k} }

// TimeKey renders t as fixed-width hex nanoseconds, so byte order is time
// order. Times before 1970 sort as 1970, times past 2262 (where
// nanoseconds overflow an int64) as 2262.
func TimeKey(t time.Time) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(UnixNanos(t)))
	return hex.EncodeToString(b[:])
}

// LastNano is the latest time whose Unix nanoseconds fit an int64.
var LastNano = time.Unix(0, math.MaxInt64)

// UnixNanos is t's Unix time in nanoseconds, clamped to [0, MaxInt64]:
// time.UnixNano is undefined outside 1678-2262, and any ISO 8601 date up
// to 9999 is valid input.
func UnixNanos(t time.Time) int64 {
	switch {
	case t.After(LastNano):
		return math.MaxInt64
	case t.Before(time.Unix(0, 0)):
		return 0
	}
	return t.UnixNano()
}
