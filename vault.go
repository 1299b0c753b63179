package tokenvault

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// Options configure a Vault. The zero value of every field but the root of
// trust (MasterKey or KeyWrapper) and one of Store or Path means a
// documented default.
type Options struct {
	// Store holds the Vault's data. The Vault does not close a Store it was
	// given. When nil, Path names a bbolt file the Vault opens and closes.
	Store store.Store
	// Path is the bbolt file used when Store is nil. One of the two is
	// required.
	Path string

	// KeyWrapper is the root of trust: it wraps the system keyring and
	// every tenant's keyring (the data keys), and nothing else reaches
	// them. Package keywrap/pkcs11 keeps its key in an HSM, package
	// keywrap/kms in a KMS; then no master key exists on disk or in the
	// process. One of KeyWrapper and MasterKey is required; they exclude
	// each other.
	KeyWrapper KeyWrapper
	// PreviousKeyWrappers only unwrap: they open keyrings wrapped before a
	// rotation to KeyWrapper (Vault.RotateKeyWrapper), for instances not
	// yet restarted, or to finish an interrupted rotation. Nil: none.
	PreviousKeyWrappers []KeyWrapper

	// MasterKey (32 bytes) is the shorthand of a local KeyWrapper
	// (NewLocalKeyWrapper): the process holds the key. The Vault keeps no
	// copy of it in the store; losing it loses the data.
	MasterKey []byte
	// PreviousMasterKeys are older master keys that still open keyrings
	// wrapped before a rotation, for example a second instance that has not
	// been restarted with the new key yet, or a store moved from a local
	// key to KeyWrapper. Nil: none.
	PreviousMasterKeys [][]byte

	// Now is the clock. Nil: time.Now. Tests inject one to check expiry
	// without sleeping.
	Now func() time.Time

	// SweepInterval is how often expired objects are removed and records
	// of rotated data keys re-sealed. Zero: one minute. Negative: no
	// background sweeper (call Sweep and Reseal yourself).
	// Expired objects are refused at the instant they expire either way.
	SweepInterval time.Duration

	// LogRetention is how long audit log lines are kept: the sweeper
	// removes older ones, in bounded transactions. Zero: kept forever.
	// Negative: Open fails. PCI DSS asks for at least a year of audit
	// trail; the server's default is 400 days.
	LogRetention time.Duration

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
	// accept on GET: mail scanners follow links). Empty: the e-mail carries
	// only the token.
	InvitationURL string

	// CodeTimeout bounds a synchronous run of reactor or transform code,
	// and the check of code when it is saved. Zero: 10 seconds.
	CodeTimeout time.Duration
	// CodeWorkers is the most sandbox worker processes running tenant
	// code at once, and so the most invocations running at once; more wait
	// for a worker within their time. Zero: 16.
	CodeWorkers int
	// CodeConcurrencyPerTenant is the most invocations of one tenant's
	// code (reactors synchronous or not, transforms, checks of code) that
	// run at once; more wait within their time, then fail with
	// Unavailable. Zero: half of CodeWorkers.
	//
	// A tenant's second and later invocations at once run only while
	// fewer than CodeConcurrencyPerTenant workers are busy in all; the
	// other CodeWorkers − CodeConcurrencyPerTenant workers are kept for
	// tenants with nothing running. So a tenant with nothing running
	// starts at once unless CodeWorkers − CodeConcurrencyPerTenant + 1 or
	// more other tenants are running code (9 with the defaults), however
	// slow their code; a freed worker goes to the waiting tenant with the
	// fewest invocations running (internal/sandbox documents the bound).
	// Setting it to CodeWorkers keeps no reserve.
	CodeConcurrencyPerTenant int
	// CodeMemoryBytes bounds the memory of each worker process. Zero:
	// 256 MiB.
	CodeMemoryBytes int64
	// CodeMaxResultBytes bounds what one run of tenant code may give
	// back, as JSON: a reactor's result, a transform's result and the body
	// it builds (encoded as the proxied request or response), the body of
	// a CustomHttpResponseError. Over it the call fails with TooLarge
	// (413), naming the limit. Every result is held whole by the Vault, so
	// this bounds what one invocation can make the server allocate; a
	// worker that handled a large invocation is retired and replaced.
	// Zero: 4 MiB.
	CodeMaxResultBytes int64
	// TrustedCodeInProcess runs reactor and transform code inside this
	// process instead of sandbox workers: no process boundary, no bound
	// on memory or CPU beyond the deadline. Only for a host whose tenants'
	// code it trusts entirely (its own formulas, say); never for code that
	// untrusted callers can save.
	TrustedCodeInProcess bool
	// LogCodeConsole writes what reactor and transform code prints with
	// console.* to Logger at debug level, with the tenant's and the code's
	// ids. Off by default:
	// tenant code holds detokenized data, and its console lines would
	// carry it into the host's logs. For a host whose tenants debug their
	// code on a vault that holds no real data.
	LogCodeConsole bool
	// HTTPClient delivers reactor webhooks and forwards proxy requests.
	// Nil: a client with timeouts that does not follow redirects and,
	// unless AllowPrivateDestinations, refuses to connect to loopback,
	// private and link-local addresses (so a tenant cannot reach the
	// host's network through a proxy or webhook). A client given here is
	// used as is.
	HTTPClient *http.Client
	// AllowPrivateDestinations lets proxies and webhooks reach loopback and
	// private addresses: for tests and single-host setups.
	AllowPrivateDestinations bool
	// ProxyMaxResponseBytes bounds a destination's response read through
	// a proxy. Zero: 10 MiB.
	ProxyMaxResponseBytes int64
	// CVCRetention is how long a card's cvc is kept after it was written
	// (by tokenizing, or by a patch sending a cvc, which starts a new
	// window). Past it, every read leaves the cvc out at once, and the
	// sweeper removes it from the stored record. Zero: DefaultCVCRetention
	// (one hour). Negative is an error from Open: to keep a cvc as briefly
	// as possible, give a small positive duration.
	CVCRetention time.Duration

	// WebhookBackoff is the wait before the first retry of a failed
	// webhook delivery; it doubles with each retry (5 attempts in all).
	// Zero: one second.
	WebhookBackoff time.Duration

	// RatePerKey bounds the calls of one API or session key per second,
	// with a burst of one second's worth (at least 1); a public
	// application's key, every browser's, per client address. Zero (or
	// negative): no limit. Over it, calls are RateLimited. Limits are per Vault
	// instance: see ratelimit.go and the package documentation.
	RatePerKey float64
	// RatePerTenant bounds the calls of all keys of one tenant per second,
	// as RatePerKey (a public application's key's calls counted per client
	// address, apart from the others). Zero: no limit.
	RatePerTenant float64
	// AuthFailuresPerMinute bounds failed authentications per client
	// address (CallInfo.ClientAddress; in-process callers without one are
	// not throttled): past it, further failures from that address are
	// RateLimited instead of Unauthenticated until the bucket refills. A
	// key that authenticates is never refused by it, so failures sent from
	// a shared address (a NAT, a reverse proxy) lock nobody out. Zero:
	// DefaultAuthFailuresPerMinute (100). Negative: no limit.
	AuthFailuresPerMinute int
	// SessionsPerApplication bounds the sessions one public application
	// creates per second from one client address (CallInfo.ClientAddress;
	// in-process callers without one share one bucket), with a burst of
	// SessionBurstSeconds' worth: another address has its own, so one
	// holder of the public key cannot use up everyone's.
	// Zero: DefaultSessionsPerApplication (5 a second, 50 at once).
	// Negative: no limit.
	SessionsPerApplication float64
	// MaxPendingSessionsPerApplication bounds the live sessions one public
	// application has waiting for authorization: a CreateSession past it
	// evicts the application's oldest waiting session (whose nonce then no
	// longer authorizes), so a flood never refuses other users and storage
	// stays bounded. Counted in the store, so it holds across instances.
	// Zero: DefaultMaxPendingSessions (1000). Negative: no limit.
	MaxPendingSessionsPerApplication int
	// MaxPendingSessionsPerAddress bounds the live sessions of one public
	// application created from one client address (CallInfo.ClientAddress;
	// in-process callers without one share one budget) that wait for
	// authorization: a CreateSession past it evicts that address's own
	// oldest waiting session, so one address cannot push out the sessions
	// of others. Counted in the store. Zero:
	// DefaultMaxPendingSessionsPerAddress (100). Negative: no limit.
	MaxPendingSessionsPerAddress int

	// Metrics receives counts and timings of the Vault's work (tokens,
	// runs of code, webhooks, sweeps, commits of the bbolt file it opens
	// for Path); Vault.Stats gives its gauges. Package prommetrics
	// implements it for Prometheus. Nil: nothing is measured.
	Metrics Metrics

	// AuditSinks receive every audit log line (package auditexport has a
	// file, a syslog and an HTTP sink). Each line is queued for every sink
	// in the store, in the transaction that writes it, and one goroutine
	// per sink delivers the queue at least once, in the background: a
	// slow or failing sink never delays or fails a call. Retention keeps a
	// line until every sink has it. The Vault does not close the sinks.
	// Nil: no export, and no queue is written.
	AuditSinks []AuditSink
	// AuditExportInterval is how often an exporter looks for lines other
	// instances sharing the store wrote; lines this instance writes are
	// exported soon after they commit: at once when the exporter is idle,
	// and under load in passes that begin no closer than a quarter of a
	// second (or this interval, when shorter) apart, so that a line waits
	// about that plus a pass. Zero: one second.
	AuditExportInterval time.Duration
	// AuditExportBackoff is the wait after a failed delivery before the
	// next attempt; it doubles with each failure, up to a minute. Zero:
	// one second.
	AuditExportBackoff time.Duration
}

// ErrWrongMasterKey is returned by Open when the master key, or the key
// wrapper, does not open the store's keyring (errors.Is; the error says
// which wrapper failed and why). Nothing in the store is changed.
var ErrWrongMasterKey = errors.New("tokenvault: the master key does not open this store (wrong key?)")

// Vault is a multi-tenant tokenization service. Every method authenticates
// the key it is given and checks the permission the operation needs, so
// in-process callers get exactly the security HTTP callers get.
//
// A Vault is safe for concurrent use by multiple goroutines.
type Vault struct {
	// barrier is the only holder of the store (internal/barrier).
	barrier   *barrier.Barrier
	ownsStore bool
	now       func() time.Time
	logger    *slog.Logger
	ids       idSource
	mailer    Mailer
	inviteURL string

	auth   authCache
	limits limits
	// optimistic says whether hot calls run their transaction function
	// outside the store's single writer first (optimistic.go): true for
	// stores one process holds, whose read transactions cost no round
	// trip. optimisticRetries counts first runs that could not be applied.
	optimistic        bool
	optimisticRetries atomic.Int64
	// storageFull is set while writes fail for a full storage
	// (storage_full.go).
	storageFull atomic.Bool
	// fingerprints is the fingerprint index on a store one process holds,
	// nil on a shared store, which keeps it in the store (fpindex.go).
	fingerprints *fingerprintMemory
	// maxPendingSessions and maxPendingPerAddress: see
	// Options.MaxPendingSessionsPerApplication and
	// Options.MaxPendingSessionsPerAddress.
	maxPendingSessions, maxPendingPerAddress int

	code             *sandbox.Sandbox
	httpClient       *http.Client
	allowPrivate     bool // Options.AllowPrivateDestinations
	proxyMaxResponse int64
	codeMaxResult    int64 // Options.CodeMaxResultBytes, resolved
	webhookBackoff   time.Duration
	logRetention     time.Duration
	cvcRetention     time.Duration
	// bg is cancelled by Close; asynchronous work (reactor runs, webhook
	// deliveries) runs under it and is awaited by Close through async.
	bg       context.Context
	cancelBg context.CancelFunc
	async    sync.WaitGroup
	// asyncMu guards closed and asyncByTenant, so that no asynchronous
	// work starts once Close waits for it.
	asyncMu       sync.Mutex
	closed        bool
	asyncByTenant map[string]*asyncCount
	// asyncRunning and asyncDelivering add up asyncByTenant, for Stats.
	asyncRunning, asyncDelivering int

	// metrics is Options.Metrics, nil when none.
	metrics Metrics

	// exporters deliver Options.AuditSinks, under bg (audit_export.go);
	// exportWG also waits for the log indexer (logindex.go).
	exporters []*auditExporter
	exportWG  sync.WaitGroup
	// pendingTenants are the tenants whose pending index entries the indexer
	// should look at (logindex.go).
	pendingTenants pendingTenants

	wrappers atomic.Pointer[wrappers]
	sys      *barrier.Keys // system keys: API key lookups and the expiry schedule

	// wrapMu orders key-wrapper rotation after every write that wraps a
	// keyring, so none is left under the old wrapper.
	wrapMu sync.RWMutex

	stopSweeper context.CancelFunc
	sweeperDone chan struct{}
	closeOnce   sync.Once
}

// Open opens a Vault on the store in opts, creating the system keyring on
// first use. Returns ErrWrongMasterKey if the store was created with another
// master key, or the key wrapper cannot unwrap its keyring.
func Open(ctx context.Context, opts Options) (*Vault, error) {
	ws, err := newWrappers(opts)
	if err != nil {
		return nil, err
	}
	v := &Vault{now: opts.Now, logger: opts.Logger, mailer: opts.Mailer, inviteURL: opts.InvitationURL,
		metrics: opts.Metrics}
	if v.inviteURL != "" {
		if u, err := url.Parse(v.inviteURL); err != nil || !u.IsAbs() {
			return nil, errors.New("tokenvault: Options.InvitationURL must be an absolute URL")
		}
	}
	v.wrappers.Store(ws)
	v.limits = newLimits(opts)
	v.maxPendingSessions = opts.MaxPendingSessionsPerApplication
	if v.maxPendingSessions == 0 {
		v.maxPendingSessions = DefaultMaxPendingSessions
	}
	v.maxPendingPerAddress = opts.MaxPendingSessionsPerAddress
	if v.maxPendingPerAddress == 0 {
		v.maxPendingPerAddress = DefaultMaxPendingSessionsPerAddress
	}
	if v.now == nil {
		v.now = time.Now
	}
	v.httpClient, v.webhookBackoff = opts.HTTPClient, opts.WebhookBackoff
	v.allowPrivate = opts.AllowPrivateDestinations
	if v.httpClient == nil {
		v.httpClient = outboundClient(opts.AllowPrivateDestinations)
	}
	v.codeMaxResult = opts.CodeMaxResultBytes
	if v.codeMaxResult <= 0 {
		v.codeMaxResult = DefaultCodeMaxResultBytes
	}
	v.proxyMaxResponse = opts.ProxyMaxResponseBytes
	if v.proxyMaxResponse <= 0 {
		v.proxyMaxResponse = 10 << 20
	}
	if v.webhookBackoff <= 0 {
		v.webhookBackoff = time.Second
	}
	switch v.cvcRetention = opts.CVCRetention; {
	case v.cvcRetention < 0:
		return nil, errors.New("tokenvault: Options.CVCRetention must not be negative")
	case v.cvcRetention == 0:
		v.cvcRetention = DefaultCVCRetention
	}
	v.bg, v.cancelBg = context.WithCancel(context.Background())
	v.asyncByTenant = map[string]*asyncCount{}
	if v.logger == nil {
		v.logger = slog.Default()
	}
	if opts.LogRetention < 0 {
		return nil, errors.New("tokenvault: Options.LogRetention must not be negative")
	}
	v.logRetention = opts.LogRetention
	if v.exporters, err = newAuditExporters(opts.AuditSinks); err != nil {
		return nil, err
	}
	st := opts.Store
	if st == nil {
		if opts.Path == "" {
			return nil, errors.New("tokenvault: Options.Store or Options.Path is required")
		}
		var bo *bolt.Options
		if v.metrics != nil {
			bo = &bolt.Options{OnCommit: v.metrics.StoreCommit}
		}
		s, err := bolt.Open(opts.Path, bo)
		if err != nil {
			return nil, fmt.Errorf("tokenvault: %w", err)
		}
		st, v.ownsStore = s, true
	}
	v.barrier = barrier.New(barrier.Config{Store: st, Wrapper: keyWrapping{v}, Now: v.now, TenantGone: errTenantGone})
	v.auth.enabled = v.barrier.SingleProcess()
	v.optimistic = v.auth.enabled
	if err := v.loadSystemKeys(ctx); err != nil {
		if v.ownsStore {
			v.barrier.Close()
		}
		return nil, err
	}
	if v.optimistic {
		v.fingerprints = &fingerprintMemory{}
	}
	err = v.placeFingerprints(ctx)
	if err == nil && v.fingerprints != nil {
		err = v.loadFingerprints(ctx)
	}
	if err == nil {
		err = v.buildTokenLists(ctx) // once, for a store written before them
	}
	if err == nil {
		err = v.countTenants(ctx) // once, for a store written before the count
	}
	if err != nil {
		if v.ownsStore {
			v.barrier.Close()
		}
		return nil, err
	}
	v.code = sandbox.New(sandbox.Options{
		Workers: opts.CodeWorkers, PerTenant: opts.CodeConcurrencyPerTenant, MemoryBytes: opts.CodeMemoryBytes, MaxResultBytes: v.codeMaxResult,
		Timeout: opts.CodeTimeout, InProcess: opts.TrustedCodeInProcess, Logger: v.logger, Console: opts.LogCodeConsole,
	})
	interval := opts.SweepInterval
	if interval == 0 {
		interval = time.Minute
	}
	if interval > 0 {
		v.startSweeper(interval)
	}
	exportInterval, exportBackoff := opts.AuditExportInterval, opts.AuditExportBackoff
	if exportInterval <= 0 {
		exportInterval = time.Second
	}
	if exportBackoff <= 0 {
		exportBackoff = time.Second
	}
	v.startAuditExport(exportInterval, exportBackoff)
	v.exportWG.Go(v.runLogIndexer)
	return v, nil
}

// Close stops the sweeper and closes the store if the Vault opened it.
// Calls in progress should finish first.
func (v *Vault) Close() error {
	var err error
	v.closeOnce.Do(func() {
		if v.stopSweeper != nil {
			v.stopSweeper()
			<-v.sweeperDone
		}
		v.asyncMu.Lock()
		v.closed = true
		v.asyncMu.Unlock()
		v.cancelBg()
		v.async.Wait()
		// A delivery in progress is abandoned: its lines stay queued and
		// are delivered again by the next Open.
		v.exportWG.Wait()
		v.code.Close()
		if v.ownsStore {
			err = v.barrier.Close()
		}
	})
	return err
}

// loadSystemKeys reads the system keyring, creating it in an empty store.
func (v *Vault) loadSystemKeys(ctx context.Context) error {
	fresh, err := barrier.NewKeys()
	if err != nil {
		return err
	}
	var ks *barrier.Keys
	// Read first, and write only into a store without a keyring: a Vault
	// that cannot open the store (a wrong key or wrapper) must leave it
	// byte for byte as it was (bbolt writes a new meta page on every
	// read-write commit, even an empty one).
	update := func(ctx context.Context, fn func(*barrier.Tx) error) error {
		var exists bool
		err := v.barrier.Keyring(ctx, false, func(tx *barrier.Tx) error {
			raw, err := tx.GetWrapped(barrier.SysKeyring)
			exists = raw != nil
			return err
		})
		if err != nil {
			return err
		}
		return v.barrier.Keyring(ctx, !exists, fn)
	}
	err = update(ctx, func(tx *barrier.Tx) error {
		raw, err := tx.GetWrapped(barrier.SysKeyring)
		if err != nil {
			return err
		}
		if raw == nil {
			ks = fresh
			return tx.PutKeyring(barrier.SysKeyring, fresh)
		}
		ks, err = v.barrier.UnwrapKeys(ctx, barrier.SysKeyring.String(), raw)
		if err != nil {
			return &wrongKeyError{cause: err, needs: neededKey(raw)}
		}
		return nil
	})
	if err != nil {
		var wk *wrongKeyError
		if errors.As(err, &wk) {
			return wk
		}
		return fmt.Errorf("tokenvault: open: %w", err)
	}
	v.sys = ks
	v.barrier.SetSystemKeys(ks)
	return nil
}

// wrongKeyError is ErrWrongMasterKey with why the wrapper failed, and
// which key the store needs (NeededKey).
type wrongKeyError struct {
	cause error
	needs WrappedKey // without its ciphertext
}

func (e *wrongKeyError) Error() string {
	return ErrWrongMasterKey.Error() + ": " + e.cause.Error()
}

func (e *wrongKeyError) Is(target error) bool { return target == ErrWrongMasterKey }

// result turns any error into an *Error, logging internal ones in full
// (they never contain secrets) so callers can be answered generically.
func (v *Vault) result(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Kind: Internal, Message: "the request was cancelled", Err: err}
	}
	var e *Error
	isError := errors.As(err, &e)
	if (!isError || e.Kind == Internal) && storageFull(err) {
		return v.fullError(err)
	}
	if isError {
		if e.Kind == Internal && e.Err != nil {
			v.logger.Error("tokenvault: internal error", "err", e.Err)
		}
		return e
	}
	v.logger.Error("tokenvault: internal error", "err", err)
	return &Error{Kind: Internal, Message: "internal error", Err: err}
}
