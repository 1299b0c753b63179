package tokenvault

import (
	"encoding/hex"
	"fmt"
	"time"
)

// The store key space. Tenant data lives under tenant/<tenant-id>/ and is
// sealed with that tenant's data keys; the few system records live under
// sys/. Keys never contain plaintext secrets: lookups by secret (API keys)
// go through keyed HMACs.
//
//	sys/keyring                              system keyring, wrapped by the master key
//	sys/tenant/<tid>                         tenant registry (empty values)
//	sys/apikey/<hmac>                        API and session key lookup -> sealed keyRef
//	sys/nonce/<hmac>                         unused session nonce -> sealed keyRef
//	sys/invite/<hmac>                        live invitation link token -> sealed keyRef
//	sys/formula/<id>                         official reactor formulas
//	sys/proxy/<hmac>                         proxy key lookup -> sealed keyRef
//	sys/expiry/<nanos>/<tid>/<kind>/<id>     expiry schedule for the sweeper (empty values)
//	sys/reseal/<tid>                         tenant to re-seal after a data key rotation;
//	                                         plain JSON: when to start, last key re-sealed
//	tenant/<tid>/keyring                     tenant keyring, wrapped by the master key
//	tenant/<tid>/tenant                      the tenant record
//	tenant/<tid>/<kind>/<id>                 records (application, member, ...)
//	tenant/<tid>/log/<nanos>/<id>            audit log, in time order
//	tenant/<tid>/idx/<name>/<value>/...      secondary indexes (empty values)
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
// order. Times before 1970 sort as 1970.
func timeKey(t time.Time) string {
	n := t.UnixNano()
	if n < 0 {
		n = 0
	}
	return fmt.Sprintf("%016x", uint64(n))
}

func expiryKey(at time.Time, tid, kind, id string) string {
	return sysExpiryKey + timeKey(at) + "/" + tid + "/" + kind + "/" + id
}
