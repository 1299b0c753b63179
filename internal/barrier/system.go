package barrier

import "encoding/hex"

// The system records and families: everything under sys/ that names no
// tenant. (The sys/ keys that name one, such as its registry entry or
// its expiry schedule, are built by its view: tenant.go.) Only the API
// and session key lookups authenticate: a nonce, invitation or proxy
// lookup leads to a record that is checked again when used.
var (
	SysKeyring = Key{s: "sys/keyring"}
	SysCVCScan = Key{s: "sys/cvcscan"}
	// SysLists records the build of the token list indexes.
	SysLists = Key{s: "sys/lists"}
	// SysShapeLists records the build of the token lists by shape, which
	// replaced the lists of SysLists.
	SysShapeLists = Key{s: "sys/lists-shapes"}
	// SysTenantCount is how many tenants the registry holds, kept by the
	// commits that add and remove registry entries.
	SysTenantCount = Key{s: "sys/count/tenants"}
	// SysManagementUpgrade is how many of the root's management
	// permission upgrades the store has had (internal/access, upgrade.go).
	SysManagementUpgrade = Key{s: "sys/count/management-upgrade"}
	// SysFingerprints says where the store's fingerprint index is kept.
	SysFingerprints = Key{s: "sys/fingerprints"}
	// SysReadyProbe is what Ready writes, then deletes, while the
	// storage is full. Only a store write of raw bytes: see ReadyProbe.
	SysReadyProbe = Key{s: "sys/ready-probe"}

	TenantRegistry   = Prefix{s: "sys/tenant/"}
	APIKeyLookups    = Prefix{s: "sys/apikey/", auth: true}
	NonceLookups     = Prefix{s: "sys/nonce/"}
	InviteLookups    = Prefix{s: "sys/invite/"}
	ProxyLookups     = Prefix{s: "sys/proxy/"}
	OfficialFormulas = Prefix{s: "sys/formula/"}
	ExpirySchedule   = Prefix{s: "sys/expiry/"}
	CVCSchedule      = Prefix{s: "sys/cvc/"}
	ResealMarkers    = Prefix{s: "sys/reseal/"}
	DeletionMarkers  = Prefix{s: "sys/deleting/"}
	// AuditQueues holds one export queue per audit sink.
	AuditQueues = Prefix{s: "sys/auditq/"}
	// ChainQueue holds the audit lines not chained yet, of every tenant:
	// sys/chainq/<nanos>/<tid>/<id> (TenantKeys.ChainQueueEntry).
	ChainQueue = Prefix{s: "sys/chainq/"}
	// AuditKeys holds the vault's checkpoint signing keys (Ed25519), one
	// record per key, sys/audit-key/<key id>: the public key, the private
	// seed wrapped by the key wrapper (bound to the record's key), when it
	// was made and retired. Sealed by the system keyring.
	AuditKeys = Prefix{s: "sys/audit-key/"}
	// FinalCheckpoints holds the final checkpoint of each deleted tenant's
	// chain, sys/chain-final/<tid> (FinalCheckpoint): sealed by the system
	// keyring, so it outlives the tenant's keyring.
	FinalCheckpoints = Prefix{s: "sys/chain-final/"}
	// UnsignedChains marks the tenants whose chain has lines no checkpoint
	// covers yet: sys/chain-unsigned/<nanos>/<tid> (TenantKeys.UnsignedChain),
	// written with the first line after a checkpoint and removed by the
	// next checkpoint, so that the timed checkpoint pass visits only those
	// tenants, oldest tail first. Empty value.
	UnsignedChains = Prefix{s: "sys/chain-unsigned/"}
	// Leases holds the background leases, sys/lease/<name> (Lease): which
	// instance does a piece of background work that one instance at a
	// time does (linking the audit chain, sweeping), with an epoch and an
	// expiry. Written by background work only; no call reads one.
	Leases = Prefix{s: "sys/lease/"}
	// WebhookQueue holds the due times of webhook deliveries, by tenant
	// and webhook: sys/whq/<tid>/<webhook id>/<nanos>/<delivery id>.
	WebhookQueue = Prefix{s: "sys/whq/"}
)

// APIKeyLookup is the lookup of an API or session key by its keyed MAC.
func APIKeyLookup(mac []byte) Key { return APIKeyLookups.Key(hex.EncodeToString(mac)) }

// NonceLookup is the lookup of an unused session nonce by its keyed MAC.
func NonceLookup(mac []byte) Key { return NonceLookups.Key(hex.EncodeToString(mac)) }

// InviteLookup is the lookup of a live invitation link token.
func InviteLookup(mac []byte) Key { return InviteLookups.Key(hex.EncodeToString(mac)) }

// ProxyLookup is the lookup of a proxy key.
func ProxyLookup(mac []byte) Key { return ProxyLookups.Key(hex.EncodeToString(mac)) }

// OfficialFormula is an official reactor formula, which every tenant reads.
func OfficialFormula(id string) Key { return OfficialFormulas.Key(id) }

// AuditKey is the record of the checkpoint signing key with id id.
func AuditKey(id string) Key { return AuditKeys.Key(id) }

// FinalCheckpoint is the final checkpoint of tenant tid's chain, signed
// when the tenant was deleted (TenantKeys.FinalCheckpoint).
func FinalCheckpoint(tid string) Key { return Tenant(tid).FinalCheckpoint() }

// Lease is the background lease named name (Leases).
func Lease(name string) Key { return Leases.Key(name) }

// AuditQueue is the export queue of audit sink sink.
func AuditQueue(sink string) Prefix { return AuditQueues.Sub(sink + "/") }
