package barrier

import (
	"slices"
	"strings"
	"time"
)

// The record kinds the key space treats apart. They are the Vault's
// entity names (logs.go in the root), which a root test holds equal.
const (
	KindApplication      = "application"
	KindSession          = "session"
	KindReactor          = "reactor"
	KindProxy            = "proxy"
	KindTenantMember     = "tenant_member"
	KindTenantInvitation = "tenant_invitation"
	KindTokenIntent      = "token_intent"
	KindWebhook          = "webhook"
	// KindWebhookDelivery holds one delivery of an event to one webhook,
	// at <webhook id>/<delivery id> (WebhookDelivery).
	KindWebhookDelivery = "webhook_delivery"
	kindLog             = "log"
	kindCount           = "count"
)

// authKinds are the kinds of records keys authenticate through.
var authKinds = []string{KindApplication, KindSession}

// CountedKinds are the kinds of records whose tenant keeps a count of
// them, at TenantKeys.Count, for their lists' totals.
var CountedKinds = []string{KindApplication, KindReactor, KindProxy, KindTenantMember, KindTenantInvitation}

// TenantKeys is the view of the key space of one tenant, in the manner of
// OpenBao's barrier.View: every key that names a tenant, below
// tenant/<tid>/ or in a system family (its registry entry, its expiry
// schedule...), is built through it, so no caller passes a tenant id to a
// free constructor or writes "tenant/" itself.
type TenantKeys struct{ id string }

// Tenant is the view of tenant tid's keys.
func Tenant(tid string) TenantKeys { return TenantKeys{tid} }

// ID is the tenant's id.
func (tk TenantKeys) ID() string { return tk.id }

// All is everything of the tenant. Its keys include applications and
// sessions, so a key found under it is taken to touch authentication.
func (tk TenantKeys) All() Prefix {
	return Prefix{s: "tenant/" + tk.id + "/", tenant: tk.id, auth: true}
}

// Keyring is the tenant's keyring: wrapped by the key wrapper, not
// sealed, so it carries no tenant.
func (tk TenantKeys) Keyring() Key { return Key{s: "tenant/" + tk.id + "/keyring"} }

// Record is the record of kind with id id.
func (tk TenantKeys) Record(kind, id string) Key { return tk.Records(kind).Key(id) }

// Records is the family of the tenant's records of kind.
func (tk TenantKeys) Records(kind string) Prefix {
	p := Prefix{s: "tenant/" + tk.id + "/" + kind + "/", tenant: tk.id, auth: slices.Contains(authKinds, kind)}
	if slices.Contains(CountedKinds, kind) {
		p.counted = kind
	}
	return p
}

// Count is how many records of kind the tenant holds (a CountedKinds).
func (tk TenantKeys) Count(kind string) Key { return tk.Record(kindCount, kind) }

// Index is the family of the secondary index name (empty values).
func (tk TenantKeys) Index(name string) Prefix {
	return Prefix{s: "tenant/" + tk.id + "/idx/" + name + "/", tenant: tk.id}
}

// The token lists (internal/tokens/listing). A token's list shape is
// its type and its set of containers; each shape the tenant has is named
// by a keyed HMAC of it (16 bytes: mac; its hex: hexMAC), so keys never
// spell a container.
//
// TokenShapeList is the list index of the tokens of one shape: what
// follows the prefix is a token's packed position (packPosition in
// listing), one entry per token. TokenShapeCount is how many tokens it
// holds. TokenShape is the shape's registry entry (the type and
// containers it stands for, sealed with the tenant's keyring like every
// record), written once, by the commit of its first token; TokenShapes
// the tenant's registry.
func (tk TenantKeys) TokenShapeList(mac string) Prefix { return tk.Index("tl-s").Sub(mac) }

func (tk TenantKeys) TokenShapeCount(hexMAC string) Key { return tk.Record(kindCount, "tok-s/"+hexMAC) }

func (tk TenantKeys) TokenShapes() Prefix { return tk.Records(kindTokenShape) }

func (tk TenantKeys) TokenShape(hexMAC string) Key { return tk.TokenShapes().Key(hexMAC) }

// TokenOverflowMark marks a container (by the hex of a keyed HMAC of it)
// as holding, at or below it, tokens of the overflow lists: the shapes a
// full registry had no room for. Empty value; written with the first such
// token, never removed while the tenant lives.
func (tk TenantKeys) TokenOverflowMark(hexMAC string) Key { return tk.Index("tlo").Key(hexMAC) }

// kindTokenShape holds the registry of a tenant's token list shapes.
const kindTokenShape = "token_shape"

// LegacyTokenLists are the families of the token lists before shapes:
// the index of each type (tl-t), that of each container and ancestor
// (tl-c), and their counts (tok-t, tok-c). Only the build that replaces
// them with shape lists reads them, to remove them.
func (tk TenantKeys) LegacyTokenLists() []Prefix {
	return []Prefix{tk.Index("tl-t"), tk.Index("tl-c"),
		tk.Records(kindCount).Sub("tok-t/"), tk.Records(kindCount).Sub("tok-c/")}
}

// CursorSeal is the additional data of a sealed list cursor of the
// tenant: a name, never a key of the store.
func (tk TenantKeys) CursorSeal() Key { return Key{s: "tenant/" + tk.id + "/cursor", tenant: tk.id} }

// FingerprintIndex, SearchIndex and MetadataIndex are the token indexes
// of one fingerprint, one search value and one metadata pair (each by
// its keyed HMAC in hex, which the caller computes); their entries end
// in the token's id.
func (tk TenantKeys) FingerprintIndex(fp string) Prefix { return tk.Index("fp").Sub(fp + "/") }

func (tk TenantKeys) SearchIndex(hexMAC string) Prefix { return tk.Index("search").Sub(hexMAC + "/") }

func (tk TenantKeys) MetadataIndex(hexMAC string) Prefix { return tk.Index("meta").Sub(hexMAC + "/") }

// Logs is the tenant's audit log, in time order: log/<nanos>/<id>.
func (tk TenantKeys) Logs() Prefix { return tk.Records(kindLog) }

// LogTypeIndexes is the prefix of the legacy log-type index, and
// LogTypeIndex its part for one entity type.
func (tk TenantKeys) LogTypeIndexes() Prefix { return tk.Index("log-type") }

func (tk TenantKeys) LogTypeIndex(typ string) Prefix { return tk.LogTypeIndexes().Sub(typ + "/") }

// LogEntityTypeIndex and LogEntityIndex are prefixes of the legacy
// entity index: one type's entries, one entity's.
func (tk TenantKeys) LogEntityTypeIndex(typ string) Prefix {
	return tk.Index("log-entity").Sub(typ + "/")
}

func (tk TenantKeys) LogEntityIndex(typ, id string) Prefix {
	return tk.LogEntityTypeIndex(typ).Sub(id + "/")
}

// LineTypeIndex and LineIndex are the same prefixes in the entity index.
// An entity id that is a canonical UUID is packed there: a zero byte and
// its 16 bytes; any other is followed by "/" (ids never start with a zero
// byte: the root leaves such a one to the legacy index).
func (tk TenantKeys) LineTypeIndex(typ string) Prefix { return tk.Index("log-e").Sub(typ + "/") }

func (tk TenantKeys) LineIndex(typ, id string) Prefix {
	if u, ok := ParseUUID(id); ok {
		return tk.LineTypeIndex(typ).Sub("\x00" + string(u[:]))
	}
	return tk.LineTypeIndex(typ).Sub(id + "/")
}

// PendingLogIndex holds the index entries reads' lines wait for.
func (tk TenantKeys) PendingLogIndex() Prefix { return tk.Index("log-p") }

// CapFamily names the indexes of a family of capped live objects (the
// caps.go of internal/ratelimit): by creator, and by creator and client address.
type CapFamily string

// The capped families.
const (
	// PendingSessionCaps: unauthorized sessions of a public application.
	PendingSessionCaps CapFamily = "pending-session"
	// TokenIntentCaps: live token intents of an application or session.
	TokenIntentCaps CapFamily = "intent-creator"
)

// ByCreator is the index of family f's live objects of one creator, by
// expiry (entries <nanos>/<id>, empty values); ByAddress the same per
// client address (addr a keyed MAC of it).
func (tk TenantKeys) ByCreator(f CapFamily, creator string) Prefix {
	return tk.Index(string(f)).Sub(creator + "/")
}

func (tk TenantKeys) ByAddress(f CapFamily, creator, addr string) Prefix {
	return tk.Index(string(f) + "-addr").Sub(creator + "/" + addr + "/")
}

// CapEntries are the index entries of object id of family f, created by
// creator from the address named addr, expiring at expires: its
// creator's, and its address's unless addr is "".
func (tk TenantKeys) CapEntries(f CapFamily, creator, addr string, expires time.Time, id string) []Key {
	rest := TimeKey(expires) + "/" + id
	keys := []Key{tk.ByCreator(f, creator).Key(rest)}
	if addr != "" {
		keys = append(keys, tk.ByAddress(f, creator, addr).Key(rest))
	}
	return keys
}

// Registry is the tenant's entry in the tenant registry.
func (tk TenantKeys) Registry() Key { return TenantRegistry.Key(tk.id) }

// Reseal is the tenant's re-seal marker, Deleting its deletion marker
// (plain JSON, unsealed).
func (tk TenantKeys) Reseal() Key { return ResealMarkers.Key(tk.id) }

func (tk TenantKeys) Deleting() Key { return DeletionMarkers.Key(tk.id) }

// Expiry schedules the record of kind with id id, which expires at at,
// for the sweeper.
func (tk TenantKeys) Expiry(at time.Time, kind, id string) Key {
	return ExpirySchedule.Key(TimeKey(at) + "/" + tk.id + "/" + kind + "/" + id)
}

// EventSequence is the last sequence number of the webhook events about
// one entity (internal/events' emit.go), a count record.
func (tk TenantKeys) EventSequence(entityType, id string) Key {
	return tk.Record(kindCount, "ev/"+entityType+"/"+id)
}

// TokenIntent is the record of the tenant's token intent id (sealed
// with the tenant's keyring like every record: it holds the data), and
// TokenIntents their family.
func (tk TenantKeys) TokenIntent(id string) Key { return tk.Record(KindTokenIntent, id) }

func (tk TenantKeys) TokenIntents() Prefix { return tk.Records(KindTokenIntent) }

// TokenIntentExpiry schedules the removal of token intent id, which
// expires at at (an entry of the expiry schedule, like Expiry's).
func (tk TenantKeys) TokenIntentExpiry(at time.Time, id string) Key {
	return tk.Expiry(at, KindTokenIntent, id)
}

// CVCDue schedules the removal of the cvc of token id, written at at.
func (tk TenantKeys) CVCDue(at time.Time, id string) Key {
	return CVCSchedule.Key(TimeKey(at) + "/" + tk.id + "/" + id)
}

// AuditQueueEntry is the queue entry of sink for the tenant's log line
// stored at log/<suffix> (suffix is <nanos>/<id>). Empty value; no secret
// in the key.
func (tk TenantKeys) AuditQueueEntry(sink, suffix string) Key {
	nanos, id, _ := strings.Cut(suffix, "/")
	return AuditQueues.Key(sink + "/" + nanos + "/" + tk.id + "/" + id)
}

// WebhookDelivery is the record of delivery did of an event to the
// tenant's webhook whid, and WebhookDeliveries the deliveries to whid, in
// the order of their ids (their creation).
func (tk TenantKeys) WebhookDelivery(whid, did string) Key {
	return tk.Records(KindWebhookDelivery).Key(whid + "/" + did)
}

func (tk TenantKeys) WebhookDeliveries(whid string) Prefix {
	return tk.Records(KindWebhookDelivery).Sub(whid + "/")
}

// WebhookDue is the entry of the webhook delivery queue for delivery did
// to the tenant's webhook whid, due at due (empty value; no secret in
// the key), and WebhookDueOf the entries of that webhook, in due order.
func (tk TenantKeys) WebhookDue(whid string, due time.Time, did string) Key {
	return tk.WebhookDueOf(whid).Key(TimeKey(due) + "/" + did)
}

func (tk TenantKeys) WebhookDueOf(whid string) Prefix {
	return WebhookQueue.Sub(tk.id + "/" + whid + "/")
}

// ParseUUID parses a UUID in its canonical lowercase form only, without
// allocating: the form keys pack in 16 bytes.
func ParseUUID(s string) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
			continue
		}
		a, b := s[i], s[i+1]
		if !isLowerHex(a) || !isLowerHex(b) {
			return u, false
		}
		u[j] = unhex(a)<<4 | unhex(b)
		i += 2
		j++
	}
	return u, true
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// The tenant's audit chain (internal/auditlog/chain.go): its head, its sequence
// index and its checkpoints, sealed like every record of the tenant, and
// the chain queue entries of its lines not chained yet.
const (
	kindChain           = "chain"
	kindChainCheckpoint = "chain_checkpoint"
	kindChainLink       = "chain_link"
)

// ChainHead is the record of the tenant's chain head: the last sequence
// number and hash, and where the chain starts and was last signed.
func (tk TenantKeys) ChainHead() Key { return tk.Record(kindChain, "head") }

// ChainSeqs is the sequence index of the tenant's chain, idx/chain-seq/:
// one entry per chained line, <seq as 16 hex digits>/<the line's suffix
// nanos/id>, empty value, so the chain is walked in order by its keys
// alone.
func (tk TenantKeys) ChainSeqs() Prefix { return tk.Index("chain-seq") }

// ChainSeq is the sequence index entry of line seq, stored at
// log/<suffix>.
func (tk TenantKeys) ChainSeq(seq uint64, suffix string) Key {
	return tk.ChainSeqs().Key(SeqKey(seq) + "/" + suffix)
}

// ChainLink is the link record of the tenant's line stored at
// log/<suffix> (nanos/id): its sequence number, the hash of the line
// before it and its own. The linker writes it, and the line is not
// written again; keyed by the line, as the export, retention and a
// verification look a line's link up from the line.
func (tk TenantKeys) ChainLink(suffix string) Key { return tk.Record(kindChainLink, suffix) }

// ChainLinks is the prefix of the tenant's link records (ChainLink).
func (tk TenantKeys) ChainLinks() Prefix { return tk.Records(kindChainLink) }

// Checkpoints are the tenant's signed checkpoints, at <seq as 16 hex
// digits>, the last line each covers.
func (tk TenantKeys) Checkpoints() Prefix { return tk.Records(kindChainCheckpoint) }

// Checkpoint is the checkpoint covering the lines up to seq.
func (tk TenantKeys) Checkpoint(seq uint64) Key { return tk.Checkpoints().Key(SeqKey(seq)) }

// FinalCheckpoint is the final checkpoint of the tenant's chain, at
// sys/chain-final/<tid>: it survives the tenant's deletion.
func (tk TenantKeys) FinalCheckpoint() Key { return FinalCheckpoints.Key(tk.id) }

// UnsignedChain marks the tenant's chain as having lines no checkpoint
// covers, the first of them written at since (a TimeKey, the nanos of its
// suffix), at sys/chain-unsigned/<since>/<tid> (empty value): the timed
// checkpoint pass walks the marks in time order and stops at the first
// that is not old enough.
func (tk TenantKeys) UnsignedChain(since string) Key { return UnsignedChains.Key(since + "/" + tk.id) }

// ChainQueueEntry is the chain queue entry of the tenant's line stored at
// log/<suffix>: written with the line, removed by the commit that chains
// it. Empty value; no secret in the key.
func (tk TenantKeys) ChainQueueEntry(suffix string) Key {
	nanos, id, _ := strings.Cut(suffix, "/")
	return ChainQueue.Key(nanos + "/" + tk.id + "/" + id)
}

// SeqKey is a sequence number as 16 hex digits, which sort as the numbers do.
func SeqKey(seq uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[seq&15]
		seq >>= 4
	}
	return string(b[:])
}
