package tokenvault

import (
	"encoding/hex"
	"fmt"
	"math"
	"time"
)

// The store key space. Tenant data lives under tenant/<tenant-id>/ and is
// sealed with that tenant's data keys; the few system records live under
// sys/. Keys never contain plaintext secrets: lookups by secret (API keys)
// go through keyed HMACs.
//
//	sys/keyring                              system keyring, wrapped by the key wrapper (keywrap.go)
//	sys/tenant/<tid>                         tenant registry (empty values)
//	sys/apikey/<hmac>                        API and session key lookup -> sealed keyRef
//	sys/nonce/<hmac>                         unused session nonce -> sealed keyRef
//	sys/invite/<hmac>                        live invitation link token -> sealed keyRef
//	sys/formula/<id>                         official reactor formulas
//	sys/proxy/<hmac>                         proxy key lookup -> sealed keyRef
//	sys/expiry/<nanos>/<tid>/<kind>/<id>     expiry schedule for the sweeper (empty values)
//	sys/cvc/<nanos>/<tid>/<id>               when a card's cvc was written, for its removal
//	                                         by the sweeper (empty values; see cvc.go)
//	sys/cvcscan                              progress of the one scan giving cards stored
//	                                         before cvc retention their schedule
//	sys/reseal/<tid>                         tenant to re-seal after a data key rotation;
//	                                         plain JSON: when to start, last key re-sealed
//	sys/deleting/<tid>                       tenant being deleted: its keys are refused;
//	                                         plain JSON: phase, prefix and last key visited
//	                                         (tenant_delete.go)
//	sys/auditq/<sink>/<nanos>/<tid>/<id>     audit log line not yet delivered to export
//	                                         sink <sink> (empty values; audit_export.go)
//	tenant/<tid>/keyring                     tenant keyring, wrapped by the key wrapper
//	tenant/<tid>/tenant                      the tenant record
//	tenant/<tid>/<kind>/<id>                 records (application, member, ...)
//	tenant/<tid>/idempotency/<hmac>          idempotency key claim or kept response
//	                                         (HMAC of caller and key; idempotency.go)
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
//	tenant/<tid>/idx/<name>/<value>/...      secondary indexes (empty values), among them
//	tenant/<tid>/idx/pending-session/<app>/<nanos>/<id>  unauthorized sessions of a
//	                                         public application, by expiry (session_limits.go)
const (
	sysKeyringKey = "sys/keyring"
	sysTenantsKey = "sys/tenant/"
	sysAPIKeyKey  = "sys/apikey/"
	sysExpiryKey  = "sys/expiry/"
	sysNonceKey   = "sys/nonce/"
	sysInviteKey  = "sys/invite/"
	sysFormulaKey = "sys/formula/"
	sysProxyKey   = "sys/proxy/"
	sysResealKey  = "sys/reseal/"
	sysCVCKey     = "sys/cvc/"
	// sysAuditQueueKey holds one export queue per audit sink.
	sysAuditQueueKey = "sys/auditq/"
)

func tenantPrefix(tid string) string { return "tenant/" + tid + "/" }

func tenantKeyringKey(tid string) string { return tenantPrefix(tid) + "keyring" }

func recordKey(tid, kind, id string) string { return tenantPrefix(tid) + kind + "/" + id }

func recordPrefix(tid, kind string) string { return tenantPrefix(tid) + kind + "/" }

func indexPrefix(tid, name string) string { return tenantPrefix(tid) + "idx/" + name + "/" }

func apiKeyLookupKey(mac []byte) string { return sysAPIKeyKey + hex.EncodeToString(mac) }

func nonceLookupKey(mac []byte) string { return sysNonceKey + hex.EncodeToString(mac) }

func inviteLookupKey(mac []byte) string { return sysInviteKey + hex.EncodeToString(mac) }

// timeKey renders t as fixed-width hex nanoseconds, so byte order is time
// order. Times before 1970 sort as 1970, times past 2262 (where
// nanoseconds overflow an int64) as 2262.
func timeKey(t time.Time) string {
	return fmt.Sprintf("%016x", uint64(unixNanos(t)))
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

func expiryKey(at time.Time, tid, kind, id string) string {
	return sysExpiryKey + timeKey(at) + "/" + tid + "/" + kind + "/" + id
}
