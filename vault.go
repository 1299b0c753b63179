package tokenvault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/aliases"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/counts"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/intents"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/ratelimit"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/records"
	"github.com/tokenvault/tokenvault/internal/sandbox"
	"github.com/tokenvault/tokenvault/internal/sessions"
	"github.com/tokenvault/tokenvault/internal/subjects"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/tokens/listing"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/store/bolt"
)

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
	barrier *barrier.Barrier
	// work runs the units of work on it (internal/unit; txn.go).
	work      *unit.Work
	ownsStore bool
	// instance names this Vault among those sharing its store
	// (vault_instance.go).
	instance  string
	now       func() time.Time
	logger    *slog.Logger
	ids       unit.IDSource
	rand      *aliases.Rand // Options.Rand, for alias ids
	mailer    Mailer
	inviteURL string
	// recordKinds are the families of keys that hold records, of every
	// feature (internal/records).
	recordKinds []unit.RecordKind
	// expiryKinds are the sweeper's handlers of the schedule entries, by
	// kind, of every feature whose objects expire (sweeper.go).
	expiryKinds map[string]unit.ExpiryKind

	auth   *authCache
	limits ratelimit.Limits
	// denials bounds and counts the denied calls' lines (denied.go).
	denials *denials
	// authn resolves keys to principals (internal/access), made once the
	// system keys are loaded.
	authn *access.Authenticator
	// apps changes applications (internal/access), made with authn.
	apps *access.Applications
	// breaker counts reveals against applications' budgets (breaker.go).
	breaker access.RevealCounter
	// optimistic says whether hot calls run their transaction function
	// outside the store's single writer first (internal/unit): true for
	// stores one process holds, whose read transactions cost no round
	// trip.
	optimistic bool
	// storageFull is set while writes fail for a full storage
	// (storage_full.go).
	storageFull atomic.Bool
	// fingerprints is the fingerprint index on a store one process holds,
	// nil on a shared store, which keeps it in the store (internal/tokens).
	fingerprints *tokens.FingerprintMemory
	// tokens is the token feature (internal/tokens), wired in Open.
	tokens *tokens.Service
	// lists are the token lists, searches and access history, with what
	// this Vault knows of its tenants' token list shapes
	// (internal/tokens/listing).
	lists *listing.Lists
	// maxPendingSessions and maxPendingPerAddress: see
	// Options.Limits.MaxPendingSessionsPerApplication and
	// Options.Limits.MaxPendingSessionsPerAddress.
	maxPendingSessions, maxPendingPerAddress int
	// maxIntents and maxIntentsPerAddress: see
	// Options.Limits.MaxPendingTokenIntentsPerApplication and
	// Options.Limits.MaxPendingTokenIntentsPerAddress.
	maxIntents, maxIntentsPerAddress int
	// intents and sessions are those features (internal/intents,
	// internal/sessions), made once the system keys are loaded.
	intents  *intents.Service
	sessions *sessions.Service

	code             *sandbox.Sandbox
	httpClient       *http.Client
	outbound         outbound.Policy // Options.Outbound.AllowPrivateDestinations
	proxyMaxResponse int64
	codeMaxResult    int64 // Options.Code.MaxResultBytes, resolved
	webhookBackoff   time.Duration
	logRetention     time.Duration
	cvcRetention     time.Duration
	intentLifetime   time.Duration
	// bg is cancelled by Close; asynchronous work (reactor runs, webhook
	// deliveries) runs under it and is awaited by Close through async.
	bg       context.Context
	cancelBg context.CancelFunc
	async    *reactors.Async

	// metrics is Options.Metrics, nil when none.
	metrics Metrics

	// exporter delivers Options.AuditExport.Sinks, under bg (internal/auditlog);
	// exportWG also waits for the log indexer.
	exporter *auditlog.Exporter
	exportWG sync.WaitGroup
	// events manages webhooks and queues the events every unit of work
	// emits (internal/events' Service; webhooks.go).
	events *events.Service
	// dispatch delivers events to webhook subscriptions, under bg
	// (internal/events' Dispatcher.Run); exportWG waits for it.
	dispatch *events.Dispatcher
	// indexer turns reads' pending log index entries into index entries,
	// under bg (internal/auditlog/indexer.go); exportWG waits for it.
	indexer *auditlog.Indexer
	// linker chains the audit lines (chain_linker.go), under bg;
	// exportWG waits for it.
	linker *auditlog.Linker
	// retention prunes the audit lines past Options.Retention.Logs
	// (logs_retention.go).
	retention *auditlog.Retention

	wrappers atomic.Pointer[wrappers]
	// auditSigner is the checkpoint signing key in use, unwrapped
	// (audit_keys.go); chainOpts are Options.AuditChain resolved
	// (checkpoints.go).
	auditSigner atomic.Pointer[auditlog.Signer]
	chainOpts   AuditChainOptions
	// checkpoints signs the chains' checkpoints (checkpoints.go).
	checkpoints *auditlog.Checkpointer
	sys         *barrier.Keys // system keys: API key lookups and the expiry schedule

	// wrapMu orders key-wrapper rotation after every write that wraps a
	// keyring, so none is left under the old wrapper.
	wrapMu sync.RWMutex

	stopSweeper context.CancelFunc
	sweeperDone chan struct{}
	// subjectKeys is the data subjects' key store (Options.SubjectKeys),
	// nil without one (subjects.go).
	subjectKeys *subjects.KeyStore
	// sweepLease is the sweeper's lease (sweeper.go, internal/lease).
	sweepLease *lease.Lease
	closeOnce  sync.Once
}

// Open opens a Vault on the store in opts, creating the system keyring on
// first use. Returns ErrWrongMasterKey if the store was created with another
// master key, or the key wrapper cannot unwrap its keyring. Its other
// errors (no Store or Path, both or neither of Keys.MasterKey and
// Keys.Wrapper, a negative Retention.Logs or Retention.CVC, a
// Retention.TokenIntent out of 0 to 48 hours, a relative
// InvitationURL, audit sinks without distinct names, a store that cannot
// be opened or read) are plain errors naming the cause, of no Kind
// (ErrorKind says Internal).
func Open(ctx context.Context, opts Options) (*Vault, error) {
	ws, err := newWrappers(opts)
	if err != nil {
		return nil, err
	}
	v := &Vault{now: opts.Now, logger: opts.Logger, mailer: opts.Mailer, inviteURL: opts.InvitationURL,
		metrics: opts.Metrics, instance: newInstanceID()}
	if v.inviteURL != "" {
		if u, err := url.Parse(v.inviteURL); err != nil || !u.IsAbs() {
			return nil, errors.New("tokenvault: Options.InvitationURL must be an absolute URL")
		}
	}
	v.wrappers.Store(ws)
	v.limits = newLimits(opts)
	v.denials = newDenials(opts)
	v.maxPendingSessions = capOrDefault(opts.Limits.MaxPendingSessionsPerApplication, DefaultMaxPendingSessions)
	v.maxPendingPerAddress = capOrDefault(opts.Limits.MaxPendingSessionsPerAddress, DefaultMaxPendingSessionsPerAddress)
	v.maxIntents = capOrDefault(opts.Limits.MaxPendingTokenIntentsPerApplication, DefaultMaxPendingTokenIntents)
	v.maxIntentsPerAddress = capOrDefault(opts.Limits.MaxPendingTokenIntentsPerAddress, DefaultMaxPendingTokenIntentsPerAddress)
	if v.now == nil {
		v.now = time.Now
	}
	random := opts.Rand
	if random == nil {
		random = rand.Reader
	}
	v.rand = aliases.NewRand(random)
	v.httpClient, v.webhookBackoff = opts.HTTPClient, opts.Outbound.WebhookBackoff
	v.outbound = outbound.Policy{AllowPrivate: opts.Outbound.AllowPrivateDestinations}
	if v.httpClient == nil {
		v.httpClient = v.outbound.Client()
	}
	v.codeMaxResult = opts.Code.MaxResultBytes
	if v.codeMaxResult <= 0 {
		v.codeMaxResult = DefaultCodeMaxResultBytes
	}
	v.proxyMaxResponse = opts.Outbound.ProxyMaxResponseBytes
	if v.proxyMaxResponse <= 0 {
		v.proxyMaxResponse = 10 << 20
	}
	if v.webhookBackoff <= 0 {
		v.webhookBackoff = time.Second
	}
	switch v.cvcRetention = opts.Retention.CVC; {
	case v.cvcRetention < 0:
		return nil, errors.New("tokenvault: Options.Retention.CVC must not be negative")
	case v.cvcRetention == 0:
		v.cvcRetention = DefaultCVCRetention
	}
	switch v.intentLifetime = opts.Retention.TokenIntent; {
	case v.intentLifetime < 0 || v.intentLifetime > MaxTokenIntentLifetime:
		return nil, errors.New("tokenvault: Options.Retention.TokenIntent must be from 0 to 48 hours")
	case v.intentLifetime == 0:
		v.intentLifetime = DefaultTokenIntentLifetime
	}
	v.bg, v.cancelBg = context.WithCancel(context.Background())
	if v.logger == nil {
		v.logger = slog.Default()
	}
	v.async = v.newAsync()
	if opts.Retention.Logs < 0 {
		return nil, errors.New("tokenvault: Options.Retention.Logs must not be negative")
	}
	v.logRetention = opts.Retention.Logs
	v.chainOpts = opts.AuditChain.withDefaults()
	if err := auditlog.CheckSinks(opts.AuditExport.Sinks); err != nil {
		return nil, err
	}
	if opts.SubjectKeys != nil {
		if opts.SubjectKeys == opts.Store {
			return nil, errors.New("tokenvault: Options.SubjectKeys must be a store of its own, not Options.Store: its destructions must not be undone by restoring the data")
		}
		v.subjectKeys = &subjects.KeyStore{Store: opts.SubjectKeys}
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
	v.barrier = barrier.New(barrier.Config{Store: st, Wrapper: keyWrapping{v}, Now: v.now, TenantGone: errTenantGone, Counts: counts.Codec{}, Instance: v.instance})
	v.auth = access.NewAuthCache[*principal](v.barrier.SingleProcess(), access.MaxAuthEntries)
	v.optimistic = v.auth.SingleProcess()
	v.work = unit.NewWork(v.barrier, unit.Options{
		Now:               v.now,
		Optimistic:        v.optimistic,
		Generation:        v.auth.Generation,
		IdentitiesChanged: v.auth.Invalidate,
		Result:            v.result,
	})
	v.hookUnitsOfWork()
	v.lists = v.newLists()
	v.indexer = auditlog.NewIndexer(auditlog.IndexerConfig{Work: v.work, Later: v.optimistic && !v.barrier.Appends(),
		Fold: v.foldAppends, Logger: v.logger, Now: v.now})
	v.openEvents(opts.Webhooks)
	v.exporter = auditlog.NewExporter(auditlog.ExportConfig{
		Sinks: opts.AuditExport.Sinks, Work: v.work, Link: v.linkNow, TenantGone: errTenantGone,
		Exported: v.auditExported, Logger: v.logger, Now: v.now,
		Interval: opts.AuditExport.Interval, Backoff: opts.AuditExport.Backoff,
	})
	v.work.WriteLinesWith(&auditlog.Writer{IDs: &v.ids, Indexer: v.indexer, Exporter: v.exporter})
	v.recordKinds = records.Kinds()
	v.checkpoints = auditlog.NewCheckpointer(auditlog.CheckpointConfig{
		Work:       v.work,
		Every:      v.chainOpts.CheckpointEvery,
		Signer:     func(t *unit.Tx) (*auditlog.Signer, error) { return (&txn{Tx: t, v: v}).signer() },
		Queue:      func(t *unit.Tx, tid, suffix string) error { return (&txn{Tx: t, v: v}).queueForExport(tid, suffix) },
		NewID:      v.ids.Next,
		TenantGone: errTenantGone,
		Now:        v.now,
	})
	v.linker = auditlog.NewLinker(auditlog.LinkerConfig{
		Work:        v.work,
		Lease:       lease.New(lease.Config{Name: lease.Linker, TTL: v.chainOpts.LinkerLease, Instance: v.instance, Work: v.work, Now: v.now}),
		Instance:    v.instance,
		Checkpoints: v.checkpoints,
		Fold:        v.foldAppends,
		TenantGone:  errTenantGone,
		Logger:      v.logger,
		Now:         v.now,
	})
	v.retention = auditlog.NewRetention(auditlog.RetentionConfig{
		Work:        v.work,
		Linker:      v.linker,
		Checkpoints: v.checkpoints,
		Keep:        v.logRetention,
		Batch:       sweepBatch,
		TenantGone:  errTenantGone,
		Waiting:     v.exporter.Pending,
		Removed:     func(t *unit.Tx) { (&txn{Tx: t, v: v}).sweptOne(SweptLogs) },
	})
	if err := v.loadSystemKeys(ctx); err != nil {
		if v.ownsStore {
			v.barrier.Close()
		}
		return nil, err
	}
	v.intents = &intents.Service{IDs: &v.ids, Sys: v.sys, Lifetime: v.intentLifetime,
		MaxPerAddress: v.maxIntentsPerAddress, Max: v.maxIntents}
	v.sessions = &sessions.Service{IDs: &v.ids, Sys: v.sys, MaxPerAddress: v.maxPendingPerAddress, Max: v.maxPendingSessions,
		Application: access.LoadApplication}
	v.apps = &access.Applications{Sys: v.sys, Events: events.Applications{}}
	v.authn = &access.Authenticator{Sys: v.sys, Cache: v.auth, Limits: &v.limits, Sessions: v.sessions, Now: v.now,
		Purposes: tenants.PurposeList{}}
	if v.optimistic {
		v.fingerprints = &tokens.FingerprintMemory{}
	}
	v.tokens = v.newTokens()
	v.expiryKinds = v.gatherExpiryKinds()
	err = tokens.PlaceFingerprints(ctx, v.work, v.fingerprints)
	if err == nil && v.fingerprints != nil {
		err = tokens.LoadFingerprints(ctx, v.work, v.fingerprints)
	}
	if err == nil {
		err = v.lists.Build(ctx, v.work, v.logger) // once, for a store written before them
	}
	if err == nil {
		err = tenants.EnsureCount(ctx, v.work) // once, for a store written before the count
	}
	if err == nil {
		err = counts.FoldLeft(ctx, v.barrier) // the delta rows of counts an earlier Vault left
	}
	if err == nil {
		err = access.UpgradeManagers(ctx, v.work) // once per release that adds a management permission
	}
	if err == nil {
		err = v.ensureAuditKey(ctx) // the checkpoint signing key, made on first use
	}
	if err == nil {
		// A subject key store older than an erasure must not bring the
		// subject back (docs/erasure.md).
		var n int
		if n, err = v.reapplyErasures(ctx); n > 0 {
			v.logger.Warn("tokenvault: the subject key store held keys that erasures had destroyed (restored from an older backup?); destroyed them again", "keys", n)
		}
	}
	if err != nil {
		if v.ownsStore {
			v.barrier.Close()
		}
		return nil, err
	}
	v.code = sandbox.New(sandbox.Options{
		Workers: opts.Code.Workers, PerTenant: opts.Code.ConcurrencyPerTenant, MemoryBytes: opts.Code.MemoryBytes, MaxResultBytes: v.codeMaxResult,
		Timeout: opts.Code.Timeout, InProcess: opts.Code.TrustedInProcess, Logger: v.logger, Console: opts.Code.LogConsole,
	})
	interval := opts.Retention.SweepInterval
	if interval == 0 {
		interval = time.Minute
	}
	if interval > 0 {
		v.startSweeper(interval)
	}
	v.exportWG.Go(func() { v.exporter.Run(v.bg) })
	v.exportWG.Go(func() { v.indexer.Run(v.bg) })
	v.exportWG.Go(v.runChainer)
	if v.chainOpts.CheckpointInterval > 0 {
		v.exportWG.Go(v.runCheckpointer)
	}
	v.exportWG.Go(func() { v.dispatch.Run(v.bg) })
	v.exportWG.Go(func() { counts.Run(v.bg, v.barrier, v.logger) })
	return v, nil
}

// Close stops the sweeper and closes the store if the Vault opened it.
// Calls in progress should finish first.
//
// Returns the store's own error from closing a store the Vault opened (a
// plain error, of no Kind: ErrorKind says Internal), else nil; later calls
// return nil.
func (v *Vault) Close() error {
	var err error
	v.closeOnce.Do(func() {
		if v.stopSweeper != nil {
			v.stopSweeper()
			<-v.sweeperDone
		}
		v.async.Stop()
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
	if (!isError || e.Kind == Internal) && unit.IsStorageFull(err) {
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

// The instance. Several Vaults may share one store (PostgreSQL: several
// processes behind a load balancer; in tests, two Vaults on one store), and
// the write path keeps them apart: a row that a commit writes besides its
// own records is one only its own instance writes (DESIGN.md, Writes), named
// by the instance's id. The id is random, drawn at Open, 16 hex digits: two
// Vaults never share one, and a restarted process is a new instance, whose
// predecessor's rows are folded by whoever holds the background leases.

// newInstanceID draws an instance id.
func newInstanceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
