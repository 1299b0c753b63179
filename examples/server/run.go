package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// defaultLogRetention keeps audit log lines 400 days: above the year PCI DSS
// asks for, with a margin for an annual assessment.
const defaultLogRetention = 400 * 24 * time.Hour

// config is what flags and environment decide.
type config struct {
	addr    string
	dataDir string
	store   string // bolt or postgres
	tlsCert string
	tlsKey  string
	dsn     string
	schema  string
	metrics bool // serve GET /metrics
	// trustForwardedFor: take the client address from X-Forwarded-For.
	trustForwardedFor bool
	// logRetention: how long audit log lines are kept (0: forever).
	logRetention time.Duration
	// cvcRetention is tokenvault.Options.CVCRetention (0: its default).
	cvcRetention time.Duration
	// rotateMasterKey: replace the master key file's key at start.
	rotateMasterKey bool
	// Rate limits (tokenvault.Options), per instance.
	ratePerKey, ratePerTenant, sessionsPerApp float64
	authFailuresPerMinute                     int
}

// Server defaults of the rate limits: high enough that bench/run.sh is
// never throttled, low enough to stop one runaway key or tenant.
const (
	defaultRatePerKey    = 20000
	defaultRatePerTenant = 100000
)

func parseConfig(args []string, getenv func(string) string) (config, error) {
	c := config{addr: "127.0.0.1:8080", dataDir: "data", store: "bolt", schema: "tokenvault", metrics: true,
		ratePerKey: defaultRatePerKey, ratePerTenant: defaultRatePerTenant,
		sessionsPerApp: tokenvault.DefaultSessionsPerApplication, authFailuresPerMinute: tokenvault.DefaultAuthFailuresPerMinute,
		logRetention: defaultLogRetention}
	for _, e := range []struct {
		name string
		dst  *string
	}{
		{"TOKENVAULT_ADDR", &c.addr}, {"TOKENVAULT_DATA", &c.dataDir}, {"TOKENVAULT_STORE", &c.store},
		{"TOKENVAULT_DSN", &c.dsn}, {"TOKENVAULT_PG_SCHEMA", &c.schema},
		{"TOKENVAULT_TLS_CERT", &c.tlsCert}, {"TOKENVAULT_TLS_KEY", &c.tlsKey},
	} {
		if s := getenv(e.name); s != "" {
			*e.dst = s
		}
	}
	if s := getenv("TOKENVAULT_METRICS"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return c, fmt.Errorf("TOKENVAULT_METRICS must be true or false, not %q", s)
		}
		c.metrics = b
	}
	if s := getenv("TOKENVAULT_TRUST_FORWARDED_FOR"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return c, fmt.Errorf("TOKENVAULT_TRUST_FORWARDED_FOR must be true or false, not %q", s)
		}
		c.trustForwardedFor = b
	}
	if s := getenv("TOKENVAULT_LOG_RETENTION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return c, fmt.Errorf("TOKENVAULT_LOG_RETENTION must be a Go duration such as 9600h, not %q", s)
		}
		c.logRetention = d
	}
	for _, e := range []struct {
		name string
		dst  *float64
	}{
		{"TOKENVAULT_RATE_PER_KEY", &c.ratePerKey}, {"TOKENVAULT_RATE_PER_TENANT", &c.ratePerTenant},
		{"TOKENVAULT_SESSIONS_PER_APPLICATION", &c.sessionsPerApp},
	} {
		if s := getenv(e.name); s != "" {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return c, fmt.Errorf("%s must be a number, not %q", e.name, s)
			}
			*e.dst = f
		}
	}
	if s := getenv("TOKENVAULT_AUTH_FAILURES_PER_MINUTE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return c, fmt.Errorf("TOKENVAULT_AUTH_FAILURES_PER_MINUTE must be an integer, not %q", s)
		}
		c.authFailuresPerMinute = n
	}
	if s := getenv("TOKENVAULT_CVC_RETENTION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return c, fmt.Errorf("TOKENVAULT_CVC_RETENTION must be a duration such as 1h or 15m, not %q", s)
		}
		c.cvcRetention = d
	}
	fl := flag.NewFlagSet("server", flag.ContinueOnError)
	fl.Float64Var(&c.ratePerKey, "rate-per-key", c.ratePerKey, "requests per second one API or session key may make, per instance; 0: no limit (env TOKENVAULT_RATE_PER_KEY)")
	fl.Float64Var(&c.ratePerTenant, "rate-per-tenant", c.ratePerTenant, "requests per second all keys of one tenant may make, per instance; 0: no limit (env TOKENVAULT_RATE_PER_TENANT)")
	fl.Float64Var(&c.sessionsPerApp, "sessions-per-application", c.sessionsPerApp, "sessions per second one public application may create, per instance; negative: no limit (env TOKENVAULT_SESSIONS_PER_APPLICATION)")
	fl.IntVar(&c.authFailuresPerMinute, "auth-failures-per-minute", c.authFailuresPerMinute, "failed authentications per minute from one client address before it gets 429, per instance; negative: no limit (env TOKENVAULT_AUTH_FAILURES_PER_MINUTE)")
	fl.StringVar(&c.addr, "addr", c.addr, "listen address (env TOKENVAULT_ADDR)")
	fl.StringVar(&c.dataDir, "data", c.dataDir, "data directory (env TOKENVAULT_DATA)")
	fl.StringVar(&c.store, "store", c.store, "bolt or postgres (env TOKENVAULT_STORE)")
	fl.StringVar(&c.dsn, "dsn", c.dsn, "PostgreSQL connection string for -store postgres (env TOKENVAULT_DSN)")
	fl.StringVar(&c.schema, "schema", c.schema, "PostgreSQL schema for -store postgres (env TOKENVAULT_PG_SCHEMA)")
	fl.StringVar(&c.tlsCert, "tls-cert", c.tlsCert, "TLS certificate file (PEM); with -tls-key serves HTTPS (env TOKENVAULT_TLS_CERT)")
	fl.StringVar(&c.tlsKey, "tls-key", c.tlsKey, "TLS private key file (PEM) (env TOKENVAULT_TLS_KEY)")
	fl.BoolVar(&c.rotateMasterKey, "rotate-master-key", false, "replace <data>/master.key with a new random key at start, re-wrapping every tenant's keys")
	fl.BoolVar(&c.metrics, "metrics", c.metrics, "serve Prometheus metrics on GET /metrics, without a key (env TOKENVAULT_METRICS)")
	fl.BoolVar(&c.trustForwardedFor, "trust-forwarded-for", c.trustForwardedFor, "take the client address (for the failed-authentication throttle) from the last X-Forwarded-For entry; only behind a reverse proxy that sets it (env TOKENVAULT_TRUST_FORWARDED_FOR)")
	fl.DurationVar(&c.logRetention, "log-retention", c.logRetention, "how long audit log lines are kept, a Go duration; 0 keeps them forever (env TOKENVAULT_LOG_RETENTION)")
	fl.DurationVar(&c.cvcRetention, "cvc-retention", c.cvcRetention, "how long a card's cvc is kept after it was written, such as 15m; 0 means the default, 1h (env TOKENVAULT_CVC_RETENTION)")
	if err := fl.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.logRetention < 0:
		return c, errors.New("-log-retention must not be negative (0 keeps audit log lines forever)")
	case (c.tlsCert == "") != (c.tlsKey == ""):
		return c, errors.New("-tls-cert and -tls-key go together")
	case c.store != "bolt" && c.store != "postgres":
		return c, fmt.Errorf("-store must be bolt or postgres, not %q", c.store)
	case c.store == "postgres" && c.dsn == "":
		return c, errors.New("-store postgres needs -dsn (or TOKENVAULT_DSN)")
	case c.cvcRetention < 0:
		return c, fmt.Errorf("-cvc-retention must not be negative, not %s", c.cvcRetention)
	case c.ratePerKey < 0 || c.ratePerTenant < 0:
		return c, errors.New("-rate-per-key and -rate-per-tenant must be 0 (no limit) or more")
	}
	// 0 means no limit for the server's flags; the library's zero is its
	// default (5 a second, 100 a minute), so pass no limit as negative.
	if c.sessionsPerApp == 0 {
		c.sessionsPerApp = -1
	}
	if c.authFailuresPerMinute == 0 {
		c.authFailuresPerMinute = -1
	}
	return c, nil
}

// run serves until ctx is done. ready, when not nil, receives the listening
// address once the server accepts connections (for tests).
func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer, ready chan<- string) error {
	cfg, err := parseConfig(args, getenv)
	if err != nil {
		return err
	}
	log := logger(out)
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return err
	}
	masterKey, err := loadMasterKey(cfg.dataDir, getenv)
	if err != nil {
		return err
	}
	keyFromEnv := strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")) != ""
	if keyFromEnv && cfg.rotateMasterKey {
		return errors.New("-rotate-master-key rotates <data>/master.key; a key given in TOKENVAULT_MASTER_KEY is rotated by the program that sets it (tokenvault.Vault.RotateMasterKey)")
	}
	var pendingKey []byte // the new key of an interrupted rotation
	if !keyFromEnv {
		if pendingKey, err = readPendingKey(cfg.dataDir); err != nil {
			return err
		}
	}
	opts := tokenvault.Options{MasterKey: masterKey, Logger: log, Mailer: logMailer{log}, LogRetention: cfg.logRetention,
		CVCRetention: cfg.cvcRetention,
		// Proxies and webhooks may reach loopback and private addresses
		// only when the operator says so.
		AllowPrivateDestinations: getenv("TOKENVAULT_ALLOW_PRIVATE_DESTINATIONS") == "true",
		RatePerKey:               cfg.ratePerKey, RatePerTenant: cfg.ratePerTenant,
		SessionsPerApplication: cfg.sessionsPerApp, AuthFailuresPerMinute: cfg.authFailuresPerMinute}
	where := cfg.dataDir
	if cfg.store == "postgres" {
		s, err := openPostgres(ctx, cfg)
		if err != nil {
			return err
		}
		defer s.Close()
		opts.Store, where = s, "postgres schema "+cfg.schema
	} else {
		opts.Path = filepath.Join(cfg.dataDir, "vault.db")
	}
	if pendingKey != nil {
		opts.MasterKey, opts.PreviousMasterKeys = pendingKey, [][]byte{masterKey}
	}
	v, err := tokenvault.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer v.Close()
	switch {
	case pendingKey != nil:
		if err := finishRotation(ctx, v, cfg.dataDir, pendingKey); err != nil {
			return err
		}
		log.Info("finished an interrupted master key rotation", "key_file", filepath.Join(cfg.dataDir, "master.key"))
	case cfg.rotateMasterKey:
		newKey, err := writePendingKey(cfg.dataDir)
		if err != nil {
			return err
		}
		if err := finishRotation(ctx, v, cfg.dataDir, newKey); err != nil {
			return err
		}
		log.Info("rotated the master key", "key_file", filepath.Join(cfg.dataDir, "master.key"))
	}
	hasTenants, err := v.HasTenants(ctx)
	if err != nil {
		return err
	}
	keyFile := filepath.Join(cfg.dataDir, "management.key")
	if !hasTenants {
		boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Default"})
		if err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
		if err := os.WriteFile(keyFile, []byte(boot.Application.Key+"\n"), 0o600); err != nil {
			return err
		}
		// Printed once, on purpose: this is the only place an operator sees
		// the first key. It is not written to the log.
		fmt.Fprintf(out, "\nCreated tenant %s with a management application.\nIts API key (shown once, also saved to %s):\n\n    %s\n\n",
			boot.Tenant.ID, keyFile, boot.Application.Key)
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := newHTTPServer(newHandler(v, log, cfg.metrics, cfg.trustForwardedFor))
	scheme := "http"
	if cfg.tlsCert != "" {
		scheme = "https"
	}
	log.Info("listening", "addr", scheme+"://"+ln.Addr().String(), "data", where,
		"key_file", keyFile, "try", fmt.Sprintf("curl -H \"SVC-API-KEY: $(cat %s)\" %s://%s/applications", keyFile, scheme, ln.Addr()))
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
// that file (0600) with a random key on first run.
func loadMasterKey(dataDir string, getenv func(string) string) ([]byte, error) {
	if s := strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")); s != "" {
		return decodeKey(s, "TOKENVAULT_MASTER_KEY")
	}
	path := filepath.Join(dataDir, "master.key")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, 32)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
			f.Close()
			return nil, err
		}
		return key, f.Close()
	}
	if err != nil {
		return nil, err
	}
	return decodeKey(strings.TrimSpace(string(b)), path)
}

func decodeKey(s, from string) ([]byte, error) {
	key, err := hex.DecodeString(s)
	if err != nil || len(key) != 32 {
		// Never echo the value: it may be a real key with a typo.
		return nil, fmt.Errorf("%s must hold 64 hex digits (a 32-byte key)", from)
	}
	return key, nil
}
