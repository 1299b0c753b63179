package tokenvault

import (
	"crypto/rand"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/store"
)

// Options configure a Vault. Two things are required: where the data
// lives (Store, or Path) and the root of trust (Keys.MasterKey or
// Keys.Wrapper). The zero value of every other field, and of every group
// (Limits, Retention, Code, Outbound, AuditExport), means the default its
// documentation names; [DefaultOptions] shows them all filled in.
type Options struct {
	// Store holds the Vault's data. The Vault does not close a Store it was
	// given. When nil, Path names a bbolt file the Vault opens and closes.
	Store store.Store
	// Path is the bbolt file used when Store is nil. One of the two is
	// required; zero (empty) with a nil Store is an error from Open.
	Path string

	// Keys is the root of trust that wraps every data key. Required.
	Keys KeyOptions

	// Now is the clock. Nil: time.Now. Tests inject one to check expiry
	// without sleeping.
	Now func() time.Time
	// Rand is the randomness of alias token ids (the alias_card,
	// alias_preserve_format and alias_preserve_length filters of an id
	// expression; see TokenRequest.ID). It must give uniform random bytes;
	// it is read under a lock, so it need not be safe for concurrent use.
	// Nil: crypto/rand.Reader. Tests inject a fixed sequence to force two
	// aliases to collide.
	Rand io.Reader
	// Logger receives internal errors and sweeper activity; never secrets.
	// Nil: slog.Default().
	Logger *slog.Logger
	// Mailer sends tenant invitations (package smtpmail sends them over
	// SMTP). Nil: creating or resending an invitation fails with
	// Unavailable, and nothing is saved.
	Mailer Mailer
	// InvitationURL is the acceptance page an invitation e-mail links to;
	// the link is this URL with the query parameter token=<link token>
	// added. The page should POST the token to AcceptInvitation (never
	// accept on GET: mail scanners follow links). It must be absolute, or
	// Open fails. Empty: the e-mail carries only the token.
	InvitationURL string
	// HTTPClient delivers reactor webhooks and forwards proxy requests and
	// tenant code's fetch calls. Nil: a client with timeouts that does not
	// follow redirects and, unless Outbound.AllowPrivateDestinations,
	// refuses to connect to loopback, private and link-local addresses (so
	// a tenant cannot reach the host's network through a proxy or
	// webhook). A client given here is used as is.
	HTTPClient *http.Client
	// Metrics receives counts and timings of the Vault's work (tokens,
	// runs of code, webhooks, sweeps, commits of the bbolt file it opens
	// for Path); Vault.Stats gives its gauges. Package prommetrics
	// implements it for Prometheus. Nil: nothing is measured.
	Metrics Metrics

	// Limits bound the calls of keys, tenants and client addresses.
	// Zero: the defaults of LimitOptions (no rate limit per key or tenant).
	Limits LimitOptions
	// Retention says how long audit lines and card verification codes are
	// kept, and how often the sweeper runs. Zero: the defaults of
	// RetentionOptions (audit lines kept forever).
	Retention RetentionOptions
	// Code configures where and within what limits tenant code (reactors,
	// formulas, proxy transforms) runs. Zero: the defaults of CodeOptions
	// (sandbox worker processes).
	Code CodeOptions
	// Outbound configures what proxies, webhooks and fetch may reach.
	// Zero: the defaults of OutboundOptions (no private destinations).
	Outbound OutboundOptions
	// AuditExport sends every audit log line to sinks. Zero: no export.
	AuditExport AuditExportOptions
	// AuditChain says how often the audit chain's head is signed (a
	// checkpoint). Zero: the defaults of AuditChainOptions (every 1,000
	// lines, and a minute after an unsigned line).
	AuditChain AuditChainOptions
	// Webhooks bound and time the delivery of events to the tenants'
	// webhook subscriptions. Zero: the defaults of WebhookOptions.
	Webhooks WebhookOptions
	// SubjectKeys is the key store of the data subjects' keys
	// (docs/erasure.md): a store of its own, never Store, backed up
	// apart from it (BackupSubjectKeys), where EraseSubject destroys a
	// subject's key for good. Nil: tokens cannot carry a subject
	// (TokenRequest.Subject is Unavailable) and EraseSubject is
	// Unavailable. The Vault does not close it.
	SubjectKeys store.Store
}

// KeyOptions name the Vault's root of trust: one [KeyWrapper], or its
// local shorthand MasterKey, and the older keys that still open keyrings
// wrapped before a rotation. Exactly one of Wrapper and MasterKey is
// required: neither, or both, is an error from Open.
type KeyOptions struct {
	// MasterKey (32 bytes) is the shorthand of a local key wrapper
	// (NewLocalKeyWrapper): the process holds the key. The Vault keeps no
	// copy of it in the store; losing it loses the data. Nil: Wrapper
	// must be set.
	MasterKey []byte
	// PreviousMasterKeys are older master keys that still open keyrings
	// wrapped before a rotation, for example a second instance that has not
	// been restarted with the new key yet, or a store moved from a local
	// key to Wrapper. Nil: none.
	PreviousMasterKeys [][]byte
	// Wrapper is the root of trust: it wraps the system keyring and every
	// tenant's keyring (the data keys), and nothing else reaches them.
	// Package keywrap/pkcs11 keeps its key in an HSM, package keywrap/kms
	// in a KMS; then no master key exists on disk or in the process. Nil:
	// MasterKey must be set.
	Wrapper KeyWrapper
	// PreviousWrappers only unwrap: they open keyrings wrapped before a
	// rotation to Wrapper (Vault.RotateKeyWrapper), for instances not yet
	// restarted, or to finish an interrupted rotation. Nil: none.
	PreviousWrappers []KeyWrapper
}

// LimitOptions bound calls. Over a rate limit a call fails with
// RateLimited (Error.RetryAfter says when to try again). Rate limits are
// kept in each Vault's memory: instances sharing a PostgreSQL store apply
// them separately. The caps on pending sessions and live token intents
// are counted in the store.
type LimitOptions struct {
	// RatePerKey bounds the calls of one API or session key per second,
	// with a burst of one second's worth (at least 1); a public
	// application's key, every browser's, per client address. Zero (or
	// negative): no limit.
	RatePerKey float64
	// RatePerTenant bounds the calls of all keys of one tenant per second,
	// as RatePerKey (a public application's key's calls counted per client
	// address, apart from the others). Zero (or negative): no limit.
	RatePerTenant float64
	// AuthFailuresPerMinute bounds failed authentications per client
	// address (CallInfo.ClientAddress; in-process callers without one are
	// not throttled): past it, further failures from that address are
	// RateLimited instead of Unauthenticated until the bucket refills. A
	// key that authenticates is never refused by it, so failures sent from
	// a shared address (a NAT, a reverse proxy) lock nobody out. Zero:
	// DefaultAuthFailuresPerMinute (100). Negative: no limit.
	AuthFailuresPerMinute int
	// DeniedLinesPerMinute bounds the audit lines of denied calls
	// (operation "denied") written per tenant and minute by this Vault,
	// with a burst of a minute's worth: past it, denied calls are counted
	// and one line a minute says how many were not written. Zero:
	// DefaultDeniedLinesPerMinute (100). Negative: no bound.
	DeniedLinesPerMinute int
	// SessionsPerApplication bounds the sessions one public application
	// creates per second from one client address (CallInfo.ClientAddress;
	// in-process callers without one share one bucket), with a burst of
	// SessionBurstSeconds' worth: another address has its own, so one
	// holder of the public key cannot use up everyone's.
	// Zero: DefaultSessionsPerApplication (5 a second, 50 at once).
	// Negative: no limit.
	SessionsPerApplication float64
	// MaxPendingSessionsPerApplication bounds the live sessions one public
	// application has waiting for authorization: a CreateSession past it,
	// from an address under MaxPendingSessionsPerAddress, is refused
	// (RateLimited, with RetryAfter until the oldest waiting session
	// expires), never made by evicting another address's waiting session,
	// so a flood from many addresses cannot push out a victim's; storage
	// stays bounded. Counted in the store, so it holds across instances.
	// Zero: DefaultMaxPendingSessions (10000). Negative: no limit.
	MaxPendingSessionsPerApplication int
	// MaxPendingSessionsPerAddress bounds the live sessions of one public
	// application created from one client address (CallInfo.ClientAddress;
	// in-process callers without one share one budget) that wait for
	// authorization: a CreateSession past it evicts that address's own
	// oldest waiting session, so one address cannot push out the sessions
	// of others. Counted in the store. Zero:
	// DefaultMaxPendingSessionsPerAddress (100). Negative: no limit.
	MaxPendingSessionsPerAddress int
	// MaxPendingTokenIntentsPerApplication bounds the live token intents
	// one application or session has created (not yet converted, deleted
	// or expired): a CreateTokenIntent past it, from an address not at
	// its own cap, is refused (RateLimited), so storage stays bounded and
	// no caller's pending intent is evicted by another's. Keep it well
	// above MaxPendingTokenIntentsPerAddress: it is reached only when more
	// than their ratio of addresses hold intents at once. Counted in the
	// store, so it holds across instances. Zero: DefaultMaxPendingTokenIntents (10000).
	// Negative: no limit.
	MaxPendingTokenIntentsPerApplication int
	// MaxPendingTokenIntentsPerAddress bounds the live token intents one
	// application or session has created from one client address
	// (CallInfo.ClientAddress; in-process callers without one share one
	// budget): a CreateTokenIntent past it evicts that address's own
	// oldest live intent, so one address cannot push out the intents of
	// others. Counted in the store. Zero:
	// DefaultMaxPendingTokenIntentsPerAddress (100). Negative: no limit.
	MaxPendingTokenIntentsPerAddress int
}

// RetentionOptions say how long what the Vault may forget is kept, and
// how often the sweeper removes it.
type RetentionOptions struct {
	// SweepInterval is how often expired objects are removed and records
	// of rotated data keys re-sealed. Zero: one minute. Negative: no
	// background sweeper (call Sweep and Reseal yourself).
	// Expired objects are refused at the instant they expire either way.
	SweepInterval time.Duration
	// Logs is how long audit log lines are kept: the sweeper removes older
	// ones, in bounded transactions. Zero: kept forever. Negative: Open
	// fails. PCI DSS asks for at least a year of audit trail; the server's
	// default is 400 days. A tenant's chained lines go as a prefix of its
	// audit chain, up to the first line not old enough or not yet
	// exported, and each transaction that prunes signs a checkpoint at the
	// new start, so what is left verifies from a signed hash
	// (docs/audit-chain.md).
	Logs time.Duration
	// CVC is how long a card's cvc is kept after it was written (by
	// tokenizing, or by a patch sending a cvc, which starts a new window).
	// Past it, every read leaves the cvc out at once, and the sweeper
	// removes it from the stored record. Zero: DefaultCVCRetention (one
	// hour). Negative is an error from Open: to keep a cvc as briefly as
	// possible, give a small positive duration.
	CVC time.Duration
	// TokenIntent is how long a token intent lives when its request gives
	// no expires_at (intents.go). Zero: DefaultTokenIntentLifetime (one
	// day). Negative, or over MaxTokenIntentLifetime (48 hours), is an
	// error from Open.
	TokenIntent time.Duration
}

// CodeOptions configure the sandbox that runs tenant code: reactors,
// formulas and proxy transforms, each run in a worker process under OS
// limits (docs/internals.md, "Tenant code").
type CodeOptions struct {
	// Timeout bounds a synchronous run of reactor or transform code, and
	// the check of code when it is saved. Zero (or negative): 10 seconds.
	Timeout time.Duration
	// Workers is the most sandbox worker processes running tenant code at
	// once, and so the most invocations running at once; more wait for a
	// worker within their time. Zero (or negative): 16.
	Workers int
	// ConcurrencyPerTenant is the most invocations of one tenant's code
	// (reactors synchronous or not, transforms, checks of code) that run
	// at once; more wait within their time, then fail with Unavailable.
	// Zero (or negative): half of Workers.
	//
	// A tenant's second and later invocations at once run only while
	// fewer than ConcurrencyPerTenant workers are busy in all; the other
	// Workers − ConcurrencyPerTenant workers are kept for tenants with
	// nothing running. So a tenant with nothing running starts at once
	// unless Workers − ConcurrencyPerTenant + 1 or more other tenants are
	// running code (9 with the defaults), however slow their code; a freed
	// worker goes to the waiting tenant with the fewest invocations
	// running (internal/sandbox documents the bound). Setting it to
	// Workers keeps no reserve.
	ConcurrencyPerTenant int
	// MemoryBytes bounds the memory of each worker process. Zero (or
	// negative): 256 MiB.
	MemoryBytes int64
	// MaxResultBytes bounds what one run of tenant code may give back, as
	// JSON: a reactor's result, a transform's result and the body it
	// builds (encoded as the proxied request or response), the body of a
	// CustomHttpResponseError. Over it the call fails with TooLarge (413),
	// naming the limit. Every result is held whole by the Vault, so this
	// bounds what one invocation can make the server allocate; a worker
	// that handled a large invocation is retired and replaced. Zero (or
	// negative): DefaultCodeMaxResultBytes (4 MiB).
	MaxResultBytes int64
	// TrustedInProcess runs reactor and transform code inside this process
	// instead of sandbox workers: no process boundary, no bound on memory
	// or CPU beyond the deadline. Only for a host whose tenants' code it
	// trusts entirely (its own formulas, say); never for code that
	// untrusted callers can save. False (zero): sandbox workers.
	TrustedInProcess bool
	// LogConsole writes what reactor and transform code prints with
	// console.* to Options.Logger at debug level, with the tenant's and
	// the code's ids. False (zero): dropped, since tenant code holds
	// detokenized data and its console lines would carry it into the
	// host's logs. For a host whose tenants debug their code on a vault
	// that holds no real data.
	LogConsole bool
}

// OutboundOptions configure the requests the Vault makes for tenants:
// proxy forwards, webhook deliveries and tenant code's fetch calls.
type OutboundOptions struct {
	// AllowPrivateDestinations lets proxies, webhooks and fetch reach
	// loopback and private addresses: for tests and single-host setups.
	// False (zero): refused.
	AllowPrivateDestinations bool
	// ProxyMaxResponseBytes bounds a destination's response read through
	// a proxy. Zero (or negative): 10 MiB.
	ProxyMaxResponseBytes int64
	// WebhookBackoff is the longest wait before the first retry of a
	// failed webhook delivery; it doubles with each retry (5 attempts in
	// all), and each wait is drawn between half of that and all of it, so
	// that retries to one receiver do not arrive in lockstep. Zero (or
	// negative): one second.
	WebhookBackoff time.Duration
}

// AuditExportOptions send every audit log line to sinks, at least once
// and in the background (docs/internals.md, "Audit export").
type AuditExportOptions struct {
	// Sinks receive every audit log line (package auditexport has a file,
	// a syslog and an HTTP sink). Each line is queued for every sink in
	// the store, in the transaction that writes it, and one goroutine per
	// sink delivers the queue at least once, in the background: a slow or
	// failing sink never delays or fails a call. Retention keeps a line
	// until every sink has it. The Vault does not close the sinks. Nil: no
	// export, and no queue is written. Two sinks of one name are an error
	// from Open.
	Sinks []AuditSink
	// Interval is how often an exporter looks for lines other instances
	// sharing the store wrote; lines this instance writes are exported
	// soon after they commit: at once when the exporter is idle, and under
	// load in passes that begin no closer than a quarter of a second (or
	// this interval, when shorter) apart, so that a line waits about that
	// plus a pass. Zero (or negative): one second.
	Interval time.Duration
	// Backoff is the longest wait after a failed delivery before the next
	// attempt; it doubles with each failure, up to a minute, and each wait
	// is drawn between half of that and all of it (jitter). Zero (or
	// negative): one second.
	Backoff time.Duration
}

// Defaults of AuditChainOptions.
const (
	DefaultCheckpointEvery    = 1000
	DefaultCheckpointInterval = time.Minute
)

// DefaultLeaseTTL is how long a background lease holds without renewal,
// when AuditChainOptions.LinkerLease is zero.
const DefaultLeaseTTL = lease.DefaultTTL

// AuditChainOptions say when the vault signs each tenant's audit chain
// head with its signing key (a checkpoint, docs/audit-chain.md): whichever
// of the two comes first. Vault.SignAuditChain signs one at any time. And
// how long the linker's lease lasts (chain_linker.go).
type AuditChainOptions struct {
	// CheckpointEvery signs a tenant's head in the linker's transaction
	// that links the line bringing its unsigned lines to this many. Zero:
	// DefaultCheckpointEvery (1,000). Negative: never by count.
	CheckpointEvery int
	// CheckpointInterval signs, in the background, the head of every
	// tenant whose oldest unsigned line is at least this old (on the
	// Vault's clock, Options.Now), so that no line stays unsigned much
	// longer; a pass runs every tenth of it, between a second and the
	// interval itself. Zero: DefaultCheckpointInterval (one minute).
	// Negative: never by time.
	CheckpointInterval time.Duration
	// LinkerLease is how long the linker lease holds without renewal
	// (internal/lease): the instance holding it links every tenant's lines
	// and signs the checkpoints, and renews it every third of this; when
	// that instance dies, another takes over within this time, so it
	// bounds how long a line can stay unlinked then (chain_linker.go).
	// The sweeper's lease lasts this or twice the sweep interval,
	// whichever is longer. Zero: DefaultLeaseTTL (10 s).
	LinkerLease time.Duration
}

// withDefaults is o with every zero field set to its default.
func (o AuditChainOptions) withDefaults() AuditChainOptions {
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = DefaultCheckpointEvery
	}
	if o.CheckpointInterval == 0 {
		o.CheckpointInterval = DefaultCheckpointInterval
	}
	if o.LinkerLease <= 0 {
		o.LinkerLease = DefaultLeaseTTL
	}
	return o
}

// DefaultOptions returns Options with every field that has a default set
// to it, for reading or printing: Open treats each of these values exactly
// as it treats the field's zero value. The root of trust and the store are
// left empty (they have no default), as are the fields whose zero value
// means "none" or "off" (Mailer, Metrics, HTTPClient, the rate limits per
// key and tenant, audit log retention, audit sinks).
func DefaultOptions() Options {
	return Options{
		Now:    time.Now,
		Rand:   rand.Reader,
		Logger: slog.Default(),
		Limits: LimitOptions{
			AuthFailuresPerMinute:                DefaultAuthFailuresPerMinute,
			DeniedLinesPerMinute:                 DefaultDeniedLinesPerMinute,
			SessionsPerApplication:               DefaultSessionsPerApplication,
			MaxPendingSessionsPerApplication:     DefaultMaxPendingSessions,
			MaxPendingSessionsPerAddress:         DefaultMaxPendingSessionsPerAddress,
			MaxPendingTokenIntentsPerApplication: DefaultMaxPendingTokenIntents,
			MaxPendingTokenIntentsPerAddress:     DefaultMaxPendingTokenIntentsPerAddress,
		},
		Retention: RetentionOptions{
			SweepInterval: time.Minute,
			CVC:           DefaultCVCRetention,
			TokenIntent:   DefaultTokenIntentLifetime,
		},
		Code: CodeOptions{
			Timeout:              sandbox.DefaultTimeout,
			Workers:              sandbox.DefaultWorkers,
			ConcurrencyPerTenant: sandbox.DefaultWorkers / 2,
			MemoryBytes:          sandbox.DefaultMemoryBytes,
			MaxResultBytes:       DefaultCodeMaxResultBytes,
		},
		Outbound: OutboundOptions{
			ProxyMaxResponseBytes: 10 << 20,
			WebhookBackoff:        time.Second,
		},
		AuditExport: AuditExportOptions{
			Interval: time.Second,
			Backoff:  time.Second,
		},
		AuditChain: AuditChainOptions{
			CheckpointEvery:    DefaultCheckpointEvery,
			CheckpointInterval: DefaultCheckpointInterval,
			LinkerLease:        DefaultLeaseTTL,
		},
		Webhooks: WebhookOptions{
			MaxPerTenant:          DefaultMaxWebhooksPerTenant,
			Schedule:              DefaultWebhookSchedule(),
			Timeout:               DefaultWebhookTimeout,
			DisableAfter:          DefaultWebhookDisableAfter,
			SecretOverlap:         DefaultWebhookSecretOverlap,
			ConcurrencyPerWebhook: DefaultWebhookConcurrencyPerWebhook,
			ConcurrencyPerTenant:  DefaultWebhookConcurrencyPerTenant,
			Lease:                 DefaultWebhookLease,
			PollInterval:          DefaultWebhookPollInterval,
			DeliveryRetention:     DefaultWebhookDeliveryRetention,
			MaxPendingPerWebhook:  DefaultWebhookMaxPendingPerWebhook,
			MaxPendingPerTenant:   DefaultWebhookMaxPendingPerTenant,
		},
	}
}
