package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/console"
	"github.com/tokenvault/tokenvault/store/postgres"
	berrors "go.etcd.io/bbolt/errors"
)

// run serves until ctx is done, logging to out. ready, when not nil,
// receives the listening address once the server accepts connections (for
// tests). It binds -addr before anything else: a server that cannot listen
// writes nothing into the data directory, bootstraps no tenant and prints
// no key. The management key of a first start is written to
// <data>/management.key (0600) only; errOut gets a banner saying so, with
// the key itself only when errOut is a terminal (keyBanner), never the log.
func run(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer, ready chan<- string) error {
	cfg, err := parseConfigTo(args, getenv, out)
	if err != nil {
		return err
	}
	if getenv, err = withMasterKeyFile(getenv, cfg.masterKeyFile); err != nil {
		return err
	}
	ln, err := listen(cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close() // closed already when served (Shutdown); not otherwise
	log := logger(out, cfg.logFormat, cfg.logLevel)
	defer startGCHeadroom(uint64(cfg.gcHeadroomMiB)<<20, getenv)()
	mailer, err := newMailer(cfg, getenv, log)
	if err != nil {
		return err
	}
	var m *metrics
	if cfg.metrics {
		m = newMetrics()
	}
	sinks, closeSinks, err := auditSinks(cfg, getenv)
	if err != nil {
		return err
	}
	defer closeSinks() // after the Vault: deferred first, run last
	scheme := "http"
	if cfg.tlsCert != "" {
		scheme = "https"
	}
	requestLines := newLineBuffer(out, requestLogDelay, requestLogBlock)
	defer requestLines.Close() // after the server has shut down: its last lines
	requests := logger(requestLines, cfg.logFormat, cfg.logLevel)
	// serveVault makes the handler of an open Vault: the audit key logged,
	// metrics watching it, the first tenant made on a first start.
	keyFile := filepath.Join(cfg.dataDir, "management.key")
	serveVault := func(v *tokenvault.Vault, operatorKey string) (http.Handler, error) {
		if err := logAuditKey(ctx, v, log); err != nil {
			return nil, err
		}
		if m != nil {
			m.watch(v)
		}
		hasTenants, err := v.HasTenants(ctx)
		if err != nil {
			return nil, err
		}
		if !hasTenants {
			boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Default"})
			if err != nil {
				return nil, fmt.Errorf("bootstrap: %w", err)
			}
			if err := os.WriteFile(keyFile, []byte(boot.Application.Key+"\n"), 0o600); err != nil {
				return nil, err
			}
			log.Info("created a tenant with a management application; its key is in the key file, never in the log",
				"tenant", boot.Tenant.ID, "key_file", keyFile)
			keyBanner(errOut, boot.Tenant.ID, keyFile, string(boot.Application.Key))
		}
		api := newHandler(v, log, requests, m, cfg.trustForwardedFor, operatorKey, consolePath(cfg.console))
		return withConsole(withElements(api, v, cfg.elements, cfg.trustForwardedFor), cfg.console), nil
	}
	var srv *http.Server
	var where, operatorKeyFrom string
	if cfg.seal == sealSplit {
		// Sealed: serve the gate until k custodians unseal it.
		var closeVault func()
		var closeMu sync.Mutex
		defer func() {
			closeMu.Lock()
			defer closeMu.Unlock()
			if closeVault != nil {
				closeVault()
			}
		}()
		desc, err := readSplitDescription(splitDescriptionPath(cfg.dataDir))
		if err != nil {
			return missingSplit(cfg.dataDir, err)
		}
		var operatorKey string
		if operatorKey, operatorKeyFrom, err = loadOperatorKey(cfg, getenv); err != nil {
			return err
		}
		var current atomic.Pointer[http.Handler]
		var gate *sealGate
		gate = newSealGate(desc, operatorKey, cfg.authFailuresPerMinute, log, func(key []byte) error {
			c := cfg
			c.splitKey = key
			v, _, closeV, err := openVault(ctx, c, getenv, log, mailer, m.vaultMetrics(), sinks)
			if err != nil {
				return err
			}
			h, err := serveVault(v, operatorKey)
			if err != nil {
				closeV()
				return err
			}
			closeMu.Lock()
			closeVault = closeV
			closeMu.Unlock()
			h = gate.withUnsealRoutes(h)
			current.Store(&h)
			log.Info("unsealed: serving", append([]any{"addr", scheme + "://" + ln.Addr().String()}, managementKeyAttrs(keyFile, scheme+"://"+ln.Addr().String())...)...)
			return nil
		})
		if m != nil {
			gate.extra = map[string]http.Handler{"/metrics": m}
		}
		sealed := gate.handler()
		current.Store(&sealed)
		srv = newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
		where = cfg.dataDir
		if cfg.store == "postgres" {
			where = "postgres schema " + cfg.schema
		}
		log.Warn("sealed: the root key is split; serving nothing but the unseal routes until k custodians have each submitted a share",
			"k", desc.K, "n", desc.N, "key_id", desc.KeyID, "split_file", splitDescriptionPath(cfg.dataDir))
	} else {
		v, w, closeVault, err := openVault(ctx, cfg, getenv, log, mailer, m.vaultMetrics(), sinks)
		if err != nil {
			return err
		}
		defer closeVault()
		where = w
		operatorKey, from, err := loadOperatorKey(cfg, getenv)
		if err != nil {
			return err
		}
		operatorKeyFrom = from
		h, err := serveVault(v, operatorKey)
		if err != nil {
			return err
		}
		srv = newHTTPServer(h)
	}
	listening := []any{"addr", scheme + "://" + ln.Addr().String(), "data", where, "operator_key", operatorKeyFrom}
	if cfg.seal != sealSplit {
		listening = append(listening, managementKeyAttrs(keyFile, scheme+"://"+ln.Addr().String())...)
	}
	if cfg.console {
		listening = append(listening, "console", scheme+"://"+ln.Addr().String()+console.Prefix)
	}
	log.Info("listening", listening...)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() {
		if cfg.tlsCert != "" {
			errc <- srv.ServeTLS(ln, cfg.tlsCert, cfg.tlsKey)
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Requests still running after the grace period: drop their
		// connections before the deferred v.Close closes the store, so
		// that no client gets a response produced on a closed store.
		srv.Close()
		return err
	}
	return nil
}

// listen binds addr, saying which setting to change when it cannot: the
// address in use (another server there) is the common case.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		return ln, nil
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("cannot listen on %s: the address is already in use (another tokenvault, or another program, listens there); stop it, or give another address with -addr or TOKENVAULT_ADDR", addr)
	}
	return nil, fmt.Errorf("cannot listen on %s (-addr or TOKENVAULT_ADDR): %w", addr, err)
}

// Server timeouts: a client must send its headers within 10 s and the whole
// request within 30 s; the response must be written within 2 minutes of the
// request's headers, long enough for the slowest legitimate request (a proxy
// call: body read, request transform up to 10 s, destination up to 60 s,
// response transform up to 10 s); an idle keep-alive connection is closed
// after 2 minutes.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 2 * time.Minute
	idleTimeout       = 2 * time.Minute
)

// newHTTPServer returns the server for h, with the timeouts above, so that
// slow or idle clients cannot hold connections open forever.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
	}
}

// openPostgres opens and migrates the PostgreSQL store. Every instance
// migrates at start; Migrate is safe to run concurrently.
func openPostgres(ctx context.Context, cfg config) (*postgres.Store, error) {
	s, err := postgres.Open(ctx, cfg.dsn, &postgres.Options{Schema: cfg.schema})
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// loadMasterKey reads TOKENVAULT_MASTER_KEY, or <data>/master.key, creating
// that file (0600) with a random key on first run; created says it did.
func loadMasterKey(dataDir string, getenv func(string) string) (key []byte, created bool, err error) {
	if s := strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")); s != "" {
		key, err := decodeKey(s, "TOKENVAULT_MASTER_KEY")
		return key, false, err
	}
	path := filepath.Join(dataDir, "master.key")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, 32)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, false, err
		}
		if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
			f.Close()
			os.Remove(path)
			return nil, false, err
		}
		return key, true, f.Close()
	}
	if err != nil {
		return nil, false, err
	}
	key, err = decodeKey(strings.TrimSpace(string(b)), path)
	return key, false, err
}

func decodeKey(s, from string) ([]byte, error) {
	key, err := hex.DecodeString(s)
	if err != nil || len(key) != 32 {
		// Never echo the value: it may be a real key with a typo.
		return nil, fmt.Errorf("%s must hold 64 hex digits (a 32-byte key)", from)
	}
	return key, nil
}

// openVault opens the Vault cfg describes, creating the data directory and
// master key on first run, finishing an interrupted master key rotation,
// and rotating the key when cfg.rotateMasterKey. With -seal other than
// local, the key wrapper is opened first: a token or PIN it cannot use
// fails before anything is written, and no master key file is read or
// made. where says where the data is, for the log; closeVault closes the
// Vault, its store and its key wrapper. mailer sends invitations (nil:
// creating one is Unavailable); metrics, when not nil, measures the Vault
// (and the commits of its bbolt file).
func openVault(ctx context.Context, cfg config, getenv func(string) string, log *slog.Logger, mailer tokenvault.Mailer, metrics tokenvault.Metrics, sinks []tokenvault.AuditSink) (v *tokenvault.Vault, where string, closeVault func(), err error) {
	opts := tokenvault.Options{
		Logger:        log,
		Mailer:        mailer,
		InvitationURL: cfg.invitationURL,
		Metrics:       metrics,
		Limits: tokenvault.LimitOptions{RatePerKey: cfg.ratePerKey, RatePerTenant: cfg.ratePerTenant, SessionsPerApplication: cfg.sessionsPerApp, AuthFailuresPerMinute: cfg.authFailuresPerMinute,
			DeniedLinesPerMinute:             cfg.deniedLinesPerMinute,
			MaxPendingSessionsPerApplication: cfg.maxPendingSessionsPerApp, MaxPendingSessionsPerAddress: cfg.maxPendingSessionsPerAddr,
			MaxPendingTokenIntentsPerApplication: cfg.maxPendingIntentsPerApp, MaxPendingTokenIntentsPerAddress: cfg.maxPendingIntentsPerAddr},
		Retention: tokenvault.RetentionOptions{Logs: cfg.logRetention, CVC: cfg.cvcRetention, TokenIntent: cfg.tokenIntentTTL},
		Code: tokenvault.CodeOptions{LogConsole: cfg.logCodeConsole, MaxResultBytes: cfg.codeMaxResultBytes,
			Workers: cfg.codeWorkers, ConcurrencyPerTenant: cfg.codeConcurrencyPerTenant},
		// Proxies and webhooks may reach loopback and private addresses
		// only when the operator says so.
		Outbound:    tokenvault.OutboundOptions{AllowPrivateDestinations: cfg.allowPrivate},
		AuditExport: tokenvault.AuditExportOptions{Sinks: sinks},
		AuditChain:  auditChainOptions(cfg),
	}
	opts.Webhooks.MaxPerTenant = cfg.webhooksMaxPerTenant
	opts.Webhooks.MaxPendingPerWebhook = cfg.webhooksMaxPendingPerWebhook
	opts.Webhooks.MaxPendingPerTenant = cfg.webhooksMaxPendingPerTenant
	var closers []func() error
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	switch {
	case cfg.seal == sealSplit:
		// The key the custodians' shares made (sealGate); the Vault's
		// local key wrapper keeps its own copy.
		if len(cfg.splitKey) == 0 {
			return nil, "", nil, errors.New("-seal split: the vault is sealed")
		}
		opts.Keys.MasterKey = cfg.splitKey
	case cfg.seal != sealLocal:
		kw, closeKW, err := keyWrapper(ctx, cfg.seal, cfg, getenv, cfg.pkcs11KeyLabel, cfg.kmsAEADKeyFile)
		if err != nil {
			return nil, "", nil, fmt.Errorf("-seal %s: %w", cfg.seal, err)
		}
		closers = append(closers, closeKW)
		opts.Keys.Wrapper = kw
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		closeAll()
		return nil, "", nil, err
	}
	var masterKey, pendingKey []byte // pendingKey: the new key of an interrupted rotation
	var createdKey bool
	if cfg.seal == sealLocal {
		if masterKey, createdKey, err = loadMasterKey(cfg.dataDir, getenv); err != nil {
			return nil, "", nil, err
		}
		keyFromEnv := strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")) != ""
		if keyFromEnv && cfg.rotateMasterKey {
			return nil, "", nil, errors.New("rotate-master-key rotates <data>/master.key; a key given in TOKENVAULT_MASTER_KEY is rotated by the program that sets it (tokenvault.Vault.RotateMasterKey)")
		}
		if !keyFromEnv {
			if pendingKey, err = readPendingKey(cfg.dataDir); err != nil {
				return nil, "", nil, err
			}
		}
		opts.Keys.MasterKey = masterKey
		if pendingKey != nil {
			opts.Keys.MasterKey, opts.Keys.PreviousMasterKeys = pendingKey, [][]byte{masterKey}
		}
	} else if _, err := os.Stat(filepath.Join(cfg.dataDir, "master.key")); err == nil {
		log.Warn("a master key file is left in the data directory though -seal is not local; rotate-master-key -to "+cfg.seal+" removes it once the store has moved",
			"key_file", filepath.Join(cfg.dataDir, "master.key"))
	}
	where = cfg.dataDir
	if cfg.store == "postgres" {
		s, err := openPostgres(ctx, cfg)
		if err != nil {
			closeAll()
			return nil, "", nil, err
		}
		closers = append(closers, s.Close)
		opts.Store, where = s, "postgres schema "+cfg.schema
	} else {
		opts.Path = filepath.Join(cfg.dataDir, "vault.db")
	}
	sk, err := openSubjectKeys(ctx, cfg)
	if err != nil {
		closeAll()
		return nil, "", nil, err
	}
	closers = append(closers, sk.Close)
	opts.SubjectKeys = sk
	v, err = tokenvault.Open(ctx, opts)
	if err != nil {
		closeAll()
		if createdKey {
			// A key made for a store it does not open would only mislead.
			os.Remove(filepath.Join(cfg.dataDir, "master.key"))
		}
		switch {
		case isDamaged(err):
			err = damagedStoreError(err, cfg.dataDir)
		case errors.Is(err, tokenvault.ErrWrongMasterKey) && createdKey:
			err = missingKeyFileError(cfg.dataDir, where)
		case errors.Is(err, tokenvault.ErrWrongMasterKey) && cfg.seal == sealLocal:
			err = fmt.Errorf("%w (if the store's keys are in an HSM or KMS, give -seal and its settings)", err)
		}
		if errors.Is(err, berrors.ErrTimeout) {
			// bbolt's file lock: another process has the store open.
			err = fmt.Errorf("a tokenvault is already running on the data directory %s (%s is locked by another process): stop it first, or give another directory with -data or TOKENVAULT_DATA", cfg.dataDir, opts.Path)
		}
		return nil, "", nil, err
	}
	closers = append(closers, v.Close)
	if cfg.seal == sealLocal && masterKey != nil && strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")) == "" {
		if err := removeRotationLeftovers(cfg.dataDir, log); err != nil {
			closeAll()
			return nil, "", nil, err
		}
	}
	switch {
	case pendingKey != nil:
		log.Info("finishing an interrupted master key rotation", "pending_key_file", filepath.Join(cfg.dataDir, pendingKeyFile))
		if err := finishRotation(ctx, v, cfg.dataDir, masterKey, pendingKey, log); err != nil {
			closeAll()
			return nil, "", nil, err
		}
	case cfg.rotateMasterKey:
		newKey, err := writePendingKey(cfg.dataDir)
		if err != nil {
			closeAll()
			return nil, "", nil, err
		}
		if err := finishRotation(ctx, v, cfg.dataDir, masterKey, newKey, log); err != nil {
			closeAll()
			return nil, "", nil, err
		}
	}
	return v, where, closeAll, nil
}
