package tokenvault

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"time"
)

// The store key space. Tenant data lives under tenant/<tenant-id>/ and is
// sealed with that tenant's data keys; the few system records live under
// sys/ and are sealed with the system keyring. Keys never contain
// plaintext secrets: lookups by secret (API keys) go through keyed HMACs.
// The only values not sealed are the keyrings (wrapped by the key
// wrapper), the empty index, registry and schedule entries, and the plain
// progress markers sys/reseal/ and sys/deleting/; TestStoreIsSealed
// walks a store to hold every other value to its keyring, and every value
// to its record. Each value is the record named beside it, in its own
// format (records.go, record_<kind>.go; the JSON of before reads as
// format version 0). Keys are built
// only by the constructors below the list, as storeKeys that carry their
// tenant and whether they touch authentication.
//
//	sys/keyring                              system keyring, wrapped by the key wrapper (keywrap.go)
//	sys/tenant/<tid>                         tenant registry (empty values)
//	sys/apikey/<hmac>                        API and session key lookup -> sealed keyRef
//	                                         (record_keyref.go, also of the three below)
//	sys/nonce/<hmac>                         unused session nonce -> sealed keyRef
//	sys/invite/<hmac>                        live invitation link token -> sealed keyRef
//	sys/formula/<id>                         official reactor formulas (formulaRecord)
//	sys/proxy/<hmac>                         proxy key lookup -> sealed keyRef
//	sys/expiry/<nanos>/<tid>/<kind>/<id>     expiry schedule for the sweeper (empty values)
//	sys/cvc/<nanos>/<tid>/<id>               when a card's cvc was written, for its removal
//	                                         by the sweeper (empty values; see cvc.go)
//	sys/cvcscan                              progress of the one scan giving cards stored
//	                                         before cvc retention their schedule
//	                                         (legacyCVCScan, record_cvcscan.go)
//	sys/fingerprints                         where the fingerprint index is kept: in memory
//	                                         on a store one process holds (fpindex.go;
//	                                         fingerprintPlace, record_fingerprints.go)
//	sys/reseal/<tid>                         tenant to re-seal after a data key rotation;
//	                                         plain resealState (record_reseal.go): when to
//	                                         start, last key re-sealed
//	sys/deleting/<tid>                       tenant being deleted: its keys are refused;
//	                                         plain deletionState (record_deleting.go): phase,
//	                                         prefix and last key visited (tenant_delete.go)
//	sys/auditq/<sink>/<nanos>/<tid>/<id>     audit log line not yet delivered to export
//	                                         sink <sink> (empty values; audit_export.go)
//	sys/ready-probe                          64 KiB of random bytes (not sealed: they
//	                                         are nothing), written then deleted by Ready
//	                                         while the storage is full; left only when
//	                                         the deletion failed (storage_full.go)
//	tenant/<tid>/keyring                     tenant keyring, wrapped by the key wrapper
//	tenant/<tid>/tenant/<tid>                the tenant: a tenantRecord (record_tenant.go)
//	tenant/<tid>/<kind>/<id>                 records, each in its binary format:
//	                                         application: applicationRecord, proxy:
//	                                         proxyRecord, tenant_invitation:
//	                                         invitationRecord, tenant_member: memberRecord,
//	                                         reactor: reactorRecord, reactor_formula:
//	                                         formulaRecord, session: sessionRecord
//	                                         (record_<kind>.go; JSON before)
//	tenant/<tid>/idempotency/<hmac>          idempotency key claim or kept response
//	                                         (HMAC of caller and key; idempotency.go): an
//	                                         idempotencyRecord (record_idempotency.go)
//	tenant/<tid>/token/<id>                  a token: a tokenRecord in its binary format
//	                                         (record_token.go; JSON before version 1)
//	tenant/<tid>/log/<nanos>/<id>            audit log, in time order: a logRecord in its
//	                                         binary format (record_log.go; JSON before)
//	tenant/<tid>/idx/log-e/<type>/<entity><packed>  the one index entry of a log line,
//	                                         for entity and entity type queries; a UUID
//	                                         <entity> is packed in 17 bytes, and <packed> is
//	                                         <nanos>/<id> in 24 (logs.go).
//	                                         Lines written before record format version 1
//	                                         are indexed as they were, at
//	                                         idx/log-entity/<type>/<entity>/<nanos>/<id>, read
//	                                         beside idx/log-e (so a store of the old layout
//	                                         answers every query from the first open), and
//	                                         idx/log-type/<type>/<nanos>/<id>, read by nothing
//	                                         and removed by the sweeper in batches
//	                                         (logs_retention.go)
//	tenant/<tid>/idx/log-p/<nanos>/<id>/<type>/<entity>  the index entry a read's line
//	                                         waits for, in time order: on a store one process
//	                                         holds, the indexer turns it into the line's
//	                                         idx/log-e entry (logindex.go)
//	tenant/<tid>/idx/tl-t/<type>/<pos>       the tokens of one type in list order: creation
//	                                         time, then id; <pos> is packed (packPosition:
//	                                         8 bytes of nanoseconds, then a UUID id as a
//	                                         zero byte and its 16 bytes, any other id as it
//	                                         is); written and removed with the record, so a
//	                                         list page walks it from its cursor, and the
//	                                         list of every token merges the three types'
//	                                         (token_lists.go)
//	tenant/<tid>/idx/tl-c/<mac><pos>         the same, one family per container and each of
//	                                         its ancestors down to listDepth segments
//	                                         (<mac>: 16 bytes of the container's keyed HMAC)
//	tenant/<tid>/count/tok-t/<type>          how many tokens of the type the tenant holds,
//	tenant/<tid>/count/tok-c/<hex mac>       and in the indexed container (or below), kept
//	                                         in the commits that create and remove them
//	                                         (sealed countRecords, record_count.go, like
//	                                         every count); the tenant's total is their sum
//	tenant/<tid>/count/<kind>                how many applications, reactors, proxies,
//	                                         members or invitations it holds, kept by the
//	                                         transaction that writes the first version of
//	                                         a record or deletes it (countedKinds)
//	sys/count/tenants                        how many tenants the registry holds, kept by
//	                                         CreateTenant and DeleteTenant (sealed, system
//	                                         keyring; tenant_count.go)
//	sys/lists                                the one-time build of the token list indexes
//	                                         and counts for a store written before them
//	                                         (sealed, system keyring; token_lists_build.go;
//	                                         listBuild, record_listbuild.go)
//	tenant/<tid>/idx/<name>/<value>/...      secondary indexes (empty values), among them
//	tenant/<tid>/idx/pending-session/<app>/<nanos>/<id>  unauthorized sessions of a
//	                                         public application, by expiry (session_limits.go)
//	tenant/<tid>/idx/pending-session-addr/<app>/<addr>/<nanos>/<id>  the same per
//	                                         client address (<addr> a keyed MAC of it), by
//	                                         expiry (session_limits.go)

// storeKey is a key of the store as the constructors below build it. It
// carries what the transaction needs to know about the key and must never
// learn by parsing it: the tenant whose keyring seals the value ("" for
// the system keyring), and whether writing or deleting it can change what
// an API or session key authenticates as (the auth cache is voided after
// such a transaction; auth_cache.go). The bytes are the on-disk key,
// unchanged from before the type existed.
type storeKey struct {
	s      string
	tenant string
	auth   bool
	// counted is the kind of a record whose tenant keeps a count of
	// them (countedKinds): the transaction counts the record when it is
	// first written and when it is deleted (token_lists.go).
	counted string
}

func (k storeKey) String() string { return k.s }

// keyPrefix is the common prefix of a family of keys: scans take one, and
// the keys they find are built from it (key), so they carry its tenant and
// auth flag without being parsed.
type keyPrefix struct {
	s       string
	tenant  string
	auth    bool
	counted string
}

func (p keyPrefix) String() string { return p.s }

// key is the key of p followed by rest.
func (p keyPrefix) key(rest string) storeKey {
	return storeKey{p.s + rest, p.tenant, p.auth, p.counted}
}

// found is the key k, which a scan of p found (so k begins with p), and
// what follows p in it: one string for both, as scans return many.
func (p keyPrefix) found(k []byte) (key storeKey, rest string) {
	s := string(k)
	return storeKey{s, p.tenant, p.auth, p.counted}, s[len(p.s):]
}

// sub is the narrower prefix of p followed by rest.
func (p keyPrefix) sub(rest string) keyPrefix {
	return keyPrefix{p.s + rest, p.tenant, p.auth, p.counted}
}

// The system records and families. Only the API and session key lookups
// authenticate: a nonce, invitation or proxy lookup leads to a record that
// is checked again when used.
var (
	sysKeyringKey = storeKey{s: "sys/keyring"}
	sysCVCScanKey = storeKey{s: "sys/cvcscan"}
	// sysListsKey records the build of the token list indexes
	// (token_lists_build.go).
	sysListsKey = storeKey{s: "sys/lists"}
	// sysTenantCountKey is how many tenants the registry holds, kept by
	// the commits that add and remove registry entries (tenant_count.go).
	sysTenantCountKey = storeKey{s: "sys/count/tenants"}
	// sysFingerprintsKey says where the store's fingerprint index is
	// kept (fpindex.go).
	sysFingerprintsKey = storeKey{s: "sys/fingerprints"}
	tenantRegistry     = keyPrefix{s: "sys/tenant/"}
	apiKeyLookups      = keyPrefix{s: "sys/apikey/", auth: true}
	nonceLookups       = keyPrefix{s: "sys/nonce/"}
	inviteLookups      = keyPrefix{s: "sys/invite/"}
	proxyLookups       = keyPrefix{s: "sys/proxy/"}
	officialFormula    = keyPrefix{s: "sys/formula/"}
	expirySchedule     = keyPrefix{s: "sys/expiry/"}
	cvcSchedule        = keyPrefix{s: "sys/cvc/"}
	resealMarkers      = keyPrefix{s: "sys/reseal/"}
	deletionMarkers    = keyPrefix{s: "sys/deleting/"}
	// auditQueues holds one export queue per audit sink.
	auditQueues = keyPrefix{s: "sys/auditq/"}
	// readyProbeKey is what Ready writes, then deletes, while the
	// storage is full (storage_full.go).
	readyProbeKey = storeKey{s: "sys/ready-probe"}
)

// tenantPrefix is everything of tenant tid. Its keys include applications
// and sessions, so a key found under it is taken to touch authentication.
func tenantPrefix(tid string) keyPrefix {
	return keyPrefix{s: "tenant/" + tid + "/", tenant: tid, auth: true}
}

// tenantKeyringKey is the tenant's keyring: wrapped by the key wrapper,
// not sealed, so it carries no tenant.
func tenantKeyringKey(tid string) storeKey { return storeKey{s: "tenant/" + tid + "/keyring"} }

// kindAuthenticates reports whether records of kind are what keys
// authenticate through (applications and sessions).
func kindAuthenticates(kind string) bool {
	return kind == EntityApplication || kind == EntitySession
}

func recordKey(tid, kind, id string) storeKey { return recordPrefix(tid, kind).key(id) }

func recordPrefix(tid, kind string) keyPrefix {
	p := keyPrefix{s: "tenant/" + tid + "/" + kind + "/", tenant: tid, auth: kindAuthenticates(kind)}
	if slices.Contains(countedKinds, kind) {
		p.counted = kind
	}
	return p
}

// countedKinds are the kinds of records whose tenant keeps a count of
// them, at recordCountKey, for their lists' totals (pageRecords).
var countedKinds = []string{EntityApplication, EntityReactor, EntityProxy, EntityTenantMember, EntityTenantInvitation}

// recordCountKey is how many records of kind tenant tid holds.
func recordCountKey(tid, kind string) storeKey { return recordKey(tid, "count", kind) }

func indexPrefix(tid, name string) keyPrefix {
	return keyPrefix{s: "tenant/" + tid + "/idx/" + name + "/", tenant: tid}
}

// indexEntry is an index or schedule entry named by the list a record
// keeps of its own entries (a token's Indexes): empty, so never sealed,
// and never read by authentication.
func indexEntry(k string) storeKey { return storeKey{s: k} }

func apiKeyLookupKey(mac []byte) storeKey { return apiKeyLookups.key(hex.EncodeToString(mac)) }

func nonceLookupKey(mac []byte) storeKey { return nonceLookups.key(hex.EncodeToString(mac)) }

func inviteLookupKey(mac []byte) storeKey { return inviteLookups.key(hex.EncodeToString(mac)) }

func proxyLookupKey(mac []byte) storeKey { return proxyLookups.key(hex.EncodeToString(mac)) }

func registryKey(tid string) storeKey { return tenantRegistry.key(tid) }

func resealKey(tid string) storeKey { return resealMarkers.key(tid) }

func deletingKey(tid string) storeKey { return deletionMarkers.key(tid) }

// timeKey renders t as fixed-width hex nanoseconds, so byte order is time
// order. Times before 1970 sort as 1970, times past 2262 (where
// nanoseconds overflow an int64) as 2262.
func timeKey(t time.Time) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(unixNanos(t)))
	return hex.EncodeToString(b[:])
}

// lastNano is the latest time whose Unix nanoseconds fit an int64.
var lastNano = time.Unix(0, math.MaxInt64)

// unixNanos is t's Unix time in nanoseconds, clamped to [0, MaxInt64]:
// time.UnixNano is undefined outside 1678-2262, and any ISO 8601 date up
// to 9999 is valid input.
func unixNanos(t time.Time) int64 {
	switch {
	case t.After(lastNano):
		return math.MaxInt64
	case t.Before(time.Unix(0, 0)):
		return 0
	}
	return t.UnixNano()
}

func expiryKey(at time.Time, tid, kind, id string) storeKey {
	return expirySchedule.key(timeKey(at) + "/" + tid + "/" + kind + "/" + id)
}

// tokenTypeList is the list index of the tokens of one type, and
// tokenContainerList that of the tokens in the container (or below it)
// whose keyed HMAC is mac (containerMACLength bytes). What follows each
// prefix is a token's packed position (packPosition, token_lists.go).
func tokenTypeList(tid, typ string) keyPrefix { return indexPrefix(tid, "tl-t").sub(typ + "/") }

func tokenContainerList(tid, mac string) keyPrefix { return indexPrefix(tid, "tl-c").sub(mac) }

// Token counts: one type, one container (by the hex of its keyed HMAC).
// Sealed with the tenant's keyring like every value under it.
func tokenTypeCountKey(tid, typ string) storeKey { return recordKey(tid, "count", "tok-t/"+typ) }

func tokenContainerCountKey(tid, hexMAC string) storeKey {
	return recordKey(tid, "count", "tok-c/"+hexMAC)
}

// cursorSealKey is the additional data of a sealed list cursor of tid: a
// name, never a key of the store.
func cursorSealKey(tid string) storeKey { return storeKey{s: "tenant/" + tid + "/cursor", tenant: tid} }
