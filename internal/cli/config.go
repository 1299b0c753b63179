package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditexport"
	"github.com/tokenvault/tokenvault/smtpmail"
)

// defaultLogRetention keeps audit log lines 400 days: above the year PCI DSS
// asks for, with a margin for an annual assessment.
const defaultLogRetention = 400 * 24 * time.Hour

// Server defaults of the rate limits: high enough that bench/run.sh is
// never throttled, low enough to stop one runaway key or tenant.
const (
	defaultRatePerKey    = 20000
	defaultRatePerTenant = 100000
	defaultGCHeadroomMiB = 12
	maxGCHeadroomMiB     = 1 << 20 // 1 TiB: a typo, not a setting
)

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
	// console: serve the web console under /console/ (console.Handler).
	console bool
	// elements: serve the hosted elements under /elements/v1/
	// (elements.Handler).
	elements bool
	// allowPrivate lets proxies and webhooks reach loopback and private
	// addresses.
	allowPrivate bool
	// trustForwardedFor: take the client address from X-Forwarded-For.
	trustForwardedFor bool
	// logRetention: how long audit log lines are kept (0: forever).
	logRetention time.Duration
	// cvcRetention is tokenvault.Options.Retention.CVC (0: its default).
	cvcRetention time.Duration
	// tokenIntentTTL is tokenvault.Options.Retention.TokenIntent (0: its
	// default).
	tokenIntentTTL time.Duration
	// rotateMasterKey: replace the master key file's key (set by the
	// rotate-master-key command, not a flag).
	rotateMasterKey bool
	// Rate limits (tokenvault.Options), per instance.
	ratePerKey, ratePerTenant, sessionsPerApp float64
	authFailuresPerMinute                     int
	deniedLinesPerMinute                      int
	logLevel                                  slog.Level
	logFormat                                 string // text or json
	// logCodeConsole is tokenvault.Options.Code.LogConsole.
	logCodeConsole bool
	// codeMaxResultBytes is tokenvault.Options.Code.MaxResultBytes.
	codeMaxResultBytes int64
	// codeWorkers and codeConcurrencyPerTenant are
	// tokenvault.Options.Code.Workers and .ConcurrencyPerTenant (0: the
	// library's defaults).
	codeWorkers, codeConcurrencyPerTenant int
	// The caps on waiting sessions and live token intents
	// (tokenvault.Options.Limits; 0: the library's defaults, negative: no
	// limit).
	maxPendingSessionsPerApp, maxPendingSessionsPerAddr int
	maxPendingIntentsPerApp, maxPendingIntentsPerAddr   int
	// webhooksMaxPerTenant is tokenvault.Options.Webhooks.MaxPerTenant
	// (0: the library's default).
	webhooksMaxPerTenant int
	// webhooksMaxPendingPerWebhook and webhooksMaxPendingPerTenant are
	// tokenvault.Options.Webhooks.MaxPendingPerWebhook and
	// MaxPendingPerTenant (0: the library's defaults).
	webhooksMaxPendingPerWebhook, webhooksMaxPendingPerTenant int
	// gcHeadroomMiB is the least heap growth between collections
	// (gcheadroom.go); 0 leaves the collector as Go sets it.
	gcHeadroomMiB int
	// invitationURL is tokenvault.Options.InvitationURL.
	invitationURL string
	// SMTP for invitation e-mails (smtpmail.Config); no host: not e-mailed.
	// The password is read by smtpConfig, from a file or the environment.
	smtpHost, smtpUser, smtpPasswordFile, smtpFrom, smtpTLS string
	smtpPort                                                int
	smtpTimeout                                             time.Duration
	// operatorKeyFile holds the operator key (operator.go); empty:
	// <data>/operator.key, created on first run.
	operatorKeyFile string
	// Audit export (audit.go): a JSON lines file with rotation, a syslog
	// collector, an HTTP endpoint; empty: not exported there.
	auditFile           string
	auditFileMaxBytes   int64
	auditFileKeep       int
	auditSyslog         string
	auditHTTPURL        string
	auditHTTPSecretFile string
	// Audit chain checkpoints (tokenvault.AuditChainOptions): every so many
	// lines, and so long after an unsigned line; 0 turns either off.
	auditCheckpointEvery    int
	auditCheckpointInterval time.Duration
	// seal is the root of trust (seal.go): local, pkcs11, kms-aead or split, with
	// the settings of each. The PKCS#11 PIN is read by pkcs11PIN, from a
	// file or the environment.
	seal                                                       string
	pkcs11Lib, pkcs11TokenLabel, pkcs11KeyLabel, pkcs11PinFile string
	kmsAEADKeyFile                                             string
	// masterKeyFile: -master-key-file, a file holding the master key
	// (a systemd credential, a container secret) read at start, as
	// TOKENVAULT_MASTER_KEY would be.
	masterKeyFile string
	// rotate-master-key only: the kind to move to (empty: -seal's), and
	// the new PKCS#11 key label or AEAD key file.
	rotateTo, toPKCS11KeyLabel, toKMSAEADKeyFile string
	// -seal split: splitKey is the root key the custodians' shares made
	// (the server's sealGate; never a flag); the offline commands read it
	// from share files (-split-share), each decrypted with its custodian's
	// age identity (-split-identity). -to split: the new split's k, its
	// custodians file and the directory its share files go to.
	splitKey                     []byte
	splitShares, splitIdentities stringList
	splitK                       int
	splitRecipients, splitOut    string
	// sealSettings holds the settings of each registered kind (Register),
	// which its flags write into; sealFlagNames, its flags' names; flags,
	// the flag set they are defined on (to tell which were given).
	sealSettings  map[string]Settings
	sealFlagNames map[string][]string
	flags         *FlagSet
}

// envOnly lists the settings that have an environment variable and no
// flag, with why: secrets do not belong on a command line, where every
// user of the machine can read them (ps, /proc/<pid>/cmdline).
var envOnly = []struct{ name, usage string }{
	{"TOKENVAULT_MASTER_KEY", "the master key, 64 hex digits, instead of <data>/master.key (a secret: no flag)"},
	{"TOKENVAULT_SMTP_PASSWORD", "the SMTP password, instead of -smtp-password-file (a secret: no flag)"},
	{"TOKENVAULT_OPERATOR_KEY", "the operator key (at least 16 characters), instead of -operator-key-file (a secret: no flag)"},
	{"TOKENVAULT_AUDIT_HTTP_SECRET", "the secret signing audit POSTs to -audit-http-url, instead of -audit-http-secret-file (a secret: no flag)"},
	{"TOKENVAULT_PKCS11_PIN", "the PKCS#11 token's user PIN for -seal pkcs11, instead of -pkcs11-pin-file (a secret: no flag)"},
}

// envOnlyNamed returns the entries of envOnly with these names, in order.
func envOnlyNamed(names ...string) []struct{ name, usage string } {
	var out []struct{ name, usage string }
	for _, n := range names {
		for _, e := range envOnly {
			if e.name == n {
				out = append(out, e)
			}
		}
	}
	return out
}

// FlagSet is a flag.FlagSet whose flags each have an environment variable:
// the variable sets the flag's value, and a flag given on the command line
// wins over it.
type FlagSet struct {
	*flag.FlagSet
	env   map[string]string // flag name -> environment variable
	usage string            // the synopsis -h prints first
	// envOnly lists the command's settings that are environment
	// variables only, for -h.
	envOnly []struct{ name, usage string }
}

// NewFlagSet returns an empty FlagSet for the command name, whose -h
// prints usage first (for tests of a Seal's flags).
func NewFlagSet(name, usage string) *FlagSet { return newFlagSet(name, usage) }

// ParseEnv sets every flag whose environment variable getenv holds, then
// parses args: a flag given wins over its variable.
func (fs *FlagSet) ParseEnv(args []string, getenv func(string) string) error {
	return fs.parse(args, getenv)
}

func newFlagSet(name, usage string) *FlagSet {
	fs := &FlagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), env: map[string]string{}, usage: usage}
	fs.Usage = func() { fs.printUsage(fs.Output()) }
	return fs
}

// Bind records that environment variable env sets the flag name, which
// must have been defined already.
func (fs *FlagSet) Bind(name, env string) {
	if fs.Lookup(name) == nil {
		panic("bind of undefined flag " + name)
	}
	fs.env[name] = env
}

// parse sets every flag whose environment variable is set, then parses
// args, so flags override the environment. A bad value names the variable
// or flag it came from.
func (fs *FlagSet) parse(args []string, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := fs.env[f.Name]
		s := getenv(env)
		if err != nil || env == "" || s == "" {
			return
		}
		if serr := fs.Set(f.Name, s); serr != nil {
			err = fmt.Errorf("%s=%q: %v", env, s, serr)
		}
	})
	if err != nil {
		return err
	}
	// The flag package answers a bad command line with the error and the
	// whole usage (200 lines that hide the one that matters): it writes
	// nowhere here, and a bad command line is one line saying what is
	// wrong and where help is (a usageError: exit status 2); -h prints the
	// usage.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.printUsage(out)
		return err
	case err != nil:
		return usageError{fmt.Errorf("%v (see tokenvault %s -h)", err, fs.Name())}
	}
	return nil
}

// printUsage lists every flag with its environment variable and default,
// then the settings that are environment variables only.
func (fs *FlagSet) printUsage(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nFlags (each also set by the environment variable named; a flag given wins):\n", fs.usage)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  -%s", f.Name)
		if name != "" {
			fmt.Fprintf(w, " %s", name)
		}
		fmt.Fprintf(w, "\n    \t%s", strings.ReplaceAll(usage, "\n", "\n    \t"))
		if env := fs.env[f.Name]; env != "" {
			fmt.Fprintf(w, "\n    \tenvironment: %s", env)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	if len(fs.envOnly) > 0 {
		fmt.Fprintln(w, "\nEnvironment only:")
		for _, e := range fs.envOnly {
			fmt.Fprintf(w, "  %s\n    \t%s\n", e.name, e.usage)
		}
	}
}

// serveUsage is the synopsis of the serve command, which is the default;
// the other commands are listed after it (serveFlags).
const serveUsage = `Usage: tokenvault [serve] [flags]

Serves the Token Vault API.`

// serveFlags defines the server's flags on a new FlagSet, writing into c.
func serveFlags(c *config) *FlagSet {
	fs := newFlagSet("serve", serveUsage+"\n\n"+otherCommands())
	fs.envOnly = slices.Clone(envOnly)
	def := func(name, env string) { fs.Bind(name, env) }
	fs.StringVar(&c.addr, "addr", c.addr, "listen address")
	def("addr", "TOKENVAULT_ADDR")
	fs.StringVar(&c.dataDir, "data", c.dataDir, "data directory: master.key, management.key and, on bolt, vault.db")
	def("data", "TOKENVAULT_DATA")
	fs.StringVar(&c.masterKeyFile, "master-key-file", c.masterKeyFile, "`file` holding the master key (64 hex digits) for -seal local, read at start instead of <data>/master.key:\na systemd credential (LoadCredential=) or a container secret; like TOKENVAULT_MASTER_KEY, never written or rotated by the server")
	def("master-key-file", "TOKENVAULT_MASTER_KEY_FILE")
	fs.StringVar(&c.store, "store", c.store, "`bolt` or postgres")
	def("store", "TOKENVAULT_STORE")
	fs.StringVar(&c.dsn, "dsn", c.dsn, "PostgreSQL connection string, for -store postgres")
	def("dsn", "TOKENVAULT_DSN")
	fs.StringVar(&c.schema, "schema", c.schema, "PostgreSQL schema, for -store postgres")
	def("schema", "TOKENVAULT_PG_SCHEMA")
	fs.StringVar(&c.tlsCert, "tls-cert", c.tlsCert, "TLS certificate `file` (PEM); with -tls-key serves HTTPS")
	def("tls-cert", "TOKENVAULT_TLS_CERT")
	fs.StringVar(&c.tlsKey, "tls-key", c.tlsKey, "TLS private key `file` (PEM)")
	def("tls-key", "TOKENVAULT_TLS_KEY")
	fs.BoolVar(&c.metrics, "metrics", c.metrics, "serve Prometheus metrics on GET /metrics, without a key")
	def("metrics", "TOKENVAULT_METRICS")
	fs.BoolVar(&c.console, "console", c.console, "serve the web console under /console/ (static files; it signs in with an API key and uses the API)")
	def("console", "TOKENVAULT_CONSOLE")
	fs.BoolVar(&c.elements, "elements", c.elements, "serve the hosted card fields under /elements/v1/ (a script and frames merchant pages embed;\nonly origins in a public application's allowed_origins may frame them)")
	def("elements", "TOKENVAULT_ELEMENTS")
	fs.BoolVar(&c.allowPrivate, "allow-private-destinations", c.allowPrivate, "let proxies, webhooks and fetch reach loopback and private addresses (refused by default)")
	def("allow-private-destinations", "TOKENVAULT_ALLOW_PRIVATE_DESTINATIONS")
	fs.BoolVar(&c.trustForwardedFor, "trust-forwarded-for", c.trustForwardedFor, "take the client address (for the failed-authentication throttle and session budgets) from the last\nX-Forwarded-For entry when it is an IP address; only behind a reverse proxy that sets it")
	def("trust-forwarded-for", "TOKENVAULT_TRUST_FORWARDED_FOR")
	fs.Var(newDurationValue(&c.logRetention), "log-retention", "how long audit log lines are kept, a `duration` such as 400d (400 days), 9600h or 30m; 0 keeps them forever")
	def("log-retention", "TOKENVAULT_LOG_RETENTION")
	fs.Var(newDurationValue(&c.cvcRetention), "cvc-retention", "how long a card's cvc is kept after it was written, a `duration` such as 15m; 0 means the library's default, 1h")
	def("cvc-retention", "TOKENVAULT_CVC_RETENTION")
	fs.Var(newDurationValue(&c.tokenIntentTTL), "token-intent-ttl", "how long a token intent lives when its request gives no expires_at, a `duration` such as 6h, at most 48h; 0 means the library's default, 24h")
	def("token-intent-ttl", "TOKENVAULT_TOKEN_INTENT_TTL")
	fs.Float64Var(&c.ratePerKey, "rate-per-key", c.ratePerKey, "requests per second one API or session key may make, per instance; 0: no limit")
	def("rate-per-key", "TOKENVAULT_RATE_PER_KEY")
	fs.Float64Var(&c.ratePerTenant, "rate-per-tenant", c.ratePerTenant, "requests per second all keys of one tenant may make, per instance; 0: no limit")
	def("rate-per-tenant", "TOKENVAULT_RATE_PER_TENANT")
	fs.Float64Var(&c.sessionsPerApp, "sessions-per-application", c.sessionsPerApp, "sessions per second one public application may create from one client address, per instance; 0: no limit")
	def("sessions-per-application", "TOKENVAULT_SESSIONS_PER_APPLICATION")
	fs.IntVar(&c.authFailuresPerMinute, "auth-failures-per-minute", c.authFailuresPerMinute, "failed authentications per minute from one client address before its further failures get 429\n(valid keys are always served), per instance; 0: no limit")
	def("auth-failures-per-minute", "TOKENVAULT_AUTH_FAILURES_PER_MINUTE")
	fs.IntVar(&c.deniedLinesPerMinute, "denied-lines-per-minute", c.deniedLinesPerMinute, "audit log lines of denied requests one tenant gets per minute, per instance; past it one line a\nminute counts the others; 0: the library's default, 100; negative: no bound")
	def("denied-lines-per-minute", "TOKENVAULT_DENIED_LINES_PER_MINUTE")
	fs.IntVar(&c.maxPendingSessionsPerApp, "max-pending-sessions-per-application", c.maxPendingSessionsPerApp, "sessions one public application may have waiting for authorization; past it new ones are refused\n(429), none evicted (shared by the instances of one store); 0: the library's default, 10000; negative: no limit")
	def("max-pending-sessions-per-application", "TOKENVAULT_MAX_PENDING_SESSIONS_PER_APPLICATION")
	fs.IntVar(&c.maxPendingSessionsPerAddr, "max-pending-sessions-per-address", c.maxPendingSessionsPerAddr, "of those, the sessions created from one client address; past it that address's own oldest is\nevicted; 0: the library's default, 100; negative: no limit")
	def("max-pending-sessions-per-address", "TOKENVAULT_MAX_PENDING_SESSIONS_PER_ADDRESS")
	fs.IntVar(&c.maxPendingIntentsPerApp, "max-pending-token-intents-per-application", c.maxPendingIntentsPerApp, "live token intents one application or session may have created; past it new ones are refused\n(429), none evicted; 0: the library's default, 10000; negative: no limit")
	def("max-pending-token-intents-per-application", "TOKENVAULT_MAX_PENDING_TOKEN_INTENTS_PER_APPLICATION")
	fs.IntVar(&c.maxPendingIntentsPerAddr, "max-pending-token-intents-per-address", c.maxPendingIntentsPerAddr, "of those, the intents created from one client address; past it that address's own oldest is\nevicted; 0: the library's default, 100; negative: no limit")
	def("max-pending-token-intents-per-address", "TOKENVAULT_MAX_PENDING_TOKEN_INTENTS_PER_ADDRESS")
	fs.IntVar(&c.webhooksMaxPerTenant, "webhooks-max-per-tenant", c.webhooksMaxPerTenant, "webhooks one tenant may have; creating one more is refused (409) until one is deleted;\n0: the library's default, 10")
	def("webhooks-max-per-tenant", "TOKENVAULT_WEBHOOKS_MAX_PER_TENANT")
	fs.IntVar(&c.webhooksMaxPendingPerWebhook, "webhooks-max-pending-per-webhook", c.webhooksMaxPendingPerWebhook, "deliveries pending (queued or awaiting a retry) to one webhook; past it a test event or redelivery is\nrefused (429) and an event of an ordinary write is dropped for that webhook, counted and logged;\n0: the library's default, 10000")
	def("webhooks-max-pending-per-webhook", "TOKENVAULT_WEBHOOKS_MAX_PENDING_PER_WEBHOOK")
	fs.IntVar(&c.webhooksMaxPendingPerTenant, "webhooks-max-pending-per-tenant", c.webhooksMaxPendingPerTenant, "deliveries pending to all of one tenant's webhooks, held as the one above;\n0: the library's default, 20000")
	def("webhooks-max-pending-per-tenant", "TOKENVAULT_WEBHOOKS_MAX_PENDING_PER_TENANT")
	fs.Var((*levelValue)(&c.logLevel), "log-level", "least `level` logged: debug, info, warn or error")
	def("log-level", "TOKENVAULT_LOG_LEVEL")
	fs.StringVar(&c.logFormat, "log-format", c.logFormat, "log line format: `text` or json")
	def("log-format", "TOKENVAULT_LOG_FORMAT")
	fs.BoolVar(&c.logCodeConsole, "log-code-console", c.logCodeConsole, "log what reactor and transform code prints with console.* (at debug level); off by default,\nsince tenant code holds detokenized data: only for a vault that holds no real data")
	def("log-code-console", "TOKENVAULT_LOG_CODE_CONSOLE")
	fs.IntVar(&c.codeWorkers, "code-workers", c.codeWorkers, "sandbox worker processes running reactor and transform code at once; 0: the library's default, 16")
	def("code-workers", "TOKENVAULT_CODE_WORKERS")
	fs.IntVar(&c.codeConcurrencyPerTenant, "code-concurrency-per-tenant", c.codeConcurrencyPerTenant, "invocations of one tenant's code running at once, the rest of the workers kept for tenants\nwith nothing running; 0: half of -code-workers")
	def("code-concurrency-per-tenant", "TOKENVAULT_CODE_CONCURRENCY_PER_TENANT")
	fs.Int64Var(&c.codeMaxResultBytes, "code-max-result-bytes", c.codeMaxResultBytes, "most `bytes` one run of reactor or transform code may give back as JSON (its result,\nthe body a transform builds); more is a 413 naming the limit")
	def("code-max-result-bytes", "TOKENVAULT_CODE_MAX_RESULT_BYTES")
	fs.IntVar(&c.gcHeadroomMiB, "gc-headroom", c.gcHeadroomMiB, "`MiB` the heap may grow by between garbage collections, at least (a small heap collected\ntoo often under load); 0 leaves the collector as Go sets it, and so does GOGC in the environment")
	def("gc-headroom", "TOKENVAULT_GC_HEADROOM")
	fs.StringVar(&c.operatorKeyFile, "operator-key-file", c.operatorKeyFile, "`file` holding the operator key, which opens the operator API (/operator/: tenants, backups);\ndefault <data>/operator.key, created (0600) on first run")
	def("operator-key-file", "TOKENVAULT_OPERATOR_KEY_FILE")
	fs.StringVar(&c.invitationURL, "invitation-url", c.invitationURL, "absolute `URL` of the page that accepts invitations; their e-mails link to it with ?token=...\n(without it the e-mail carries the token and how to POST it to /tenants/invitations/accept)")
	def("invitation-url", "TOKENVAULT_INVITATION_URL")
	fs.StringVar(&c.smtpHost, "smtp-host", c.smtpHost, "SMTP server that sends invitation e-mails; without it invitations are created\nbut not e-mailed, and their links are lost (never logged)")
	def("smtp-host", "TOKENVAULT_SMTP_HOST")
	fs.IntVar(&c.smtpPort, "smtp-port", c.smtpPort, "SMTP port; 0: 587 for -smtp-tls starttls, 465 for tls, 25 for none")
	def("smtp-port", "TOKENVAULT_SMTP_PORT")
	fs.StringVar(&c.smtpUser, "smtp-user", c.smtpUser, "SMTP user name; its password comes from -smtp-password-file or TOKENVAULT_SMTP_PASSWORD")
	def("smtp-user", "TOKENVAULT_SMTP_USER")
	fs.StringVar(&c.smtpPasswordFile, "smtp-password-file", c.smtpPasswordFile, "`file` holding the SMTP password (one line)")
	def("smtp-password-file", "TOKENVAULT_SMTP_PASSWORD_FILE")
	fs.StringVar(&c.smtpFrom, "smtp-from", c.smtpFrom, "sender of invitation e-mails, such as \"Token Vault <vault@example.com>\"")
	def("smtp-from", "TOKENVAULT_SMTP_FROM")
	fs.StringVar(&c.smtpTLS, "smtp-tls", c.smtpTLS, "how the SMTP connection is secured, the `mode`: starttls (required, refused if the server does not offer it), tls (implicit, port 465),\nor none (clear text; only to a loopback -smtp-host)")
	def("smtp-tls", "TOKENVAULT_SMTP_TLS")
	fs.Var(newDurationValue(&c.smtpTimeout), "smtp-timeout", "how long sending one invitation e-mail may take, a `duration` such as 30s or 2m")
	def("smtp-timeout", "TOKENVAULT_SMTP_TIMEOUT")
	fs.StringVar(&c.auditFile, "audit-file", c.auditFile, "export every audit log line, as JSON lines, to this `file` (created 0600), at least once;\nit is renamed file.1 (file.2, ...) past -audit-file-max-bytes")
	def("audit-file", "TOKENVAULT_AUDIT_FILE")
	fs.Var((*sizeValue)(&c.auditFileMaxBytes), "audit-file-max-bytes", "`size` at which -audit-file is rotated, in bytes or such as 100MiB")
	def("audit-file-max-bytes", "TOKENVAULT_AUDIT_FILE_MAX_BYTES")
	fs.IntVar(&c.auditFileKeep, "audit-file-keep", c.auditFileKeep, "rotated audit files kept (file.1 to file.N); the oldest is removed")
	def("audit-file-keep", "TOKENVAULT_AUDIT_FILE_KEEP")
	fs.StringVar(&c.auditSyslog, "audit-syslog", c.auditSyslog, "export every audit log line as an RFC 5424 message to this syslog collector, `url` udp://host:port\nor tcp://host:port (octet-counting framing)")
	def("audit-syslog", "TOKENVAULT_AUDIT_SYSLOG")
	fs.StringVar(&c.auditHTTPURL, "audit-http-url", c.auditHTTPURL, "export audit log lines in signed JSON batches POSTed to this `url`; the secret comes from\n-audit-http-secret-file or TOKENVAULT_AUDIT_HTTP_SECRET")
	def("audit-http-url", "TOKENVAULT_AUDIT_HTTP_URL")
	fs.StringVar(&c.auditHTTPSecretFile, "audit-http-secret-file", c.auditHTTPSecretFile, "`file` holding the secret (at least 16 bytes) that signs audit POSTs (HMAC-SHA256)")
	def("audit-http-secret-file", "TOKENVAULT_AUDIT_HTTP_SECRET_FILE")
	fs.IntVar(&c.auditCheckpointEvery, "audit-checkpoint-every", c.auditCheckpointEvery, "sign each tenant's audit chain head (a checkpoint) once this many `lines` are unsigned;\n0: never by count")
	def("audit-checkpoint-every", "TOKENVAULT_AUDIT_CHECKPOINT_EVERY")
	fs.Var(newDurationValue(&c.auditCheckpointInterval), "audit-checkpoint-interval", "sign each tenant's audit chain head once its oldest unsigned line is this old, a `duration`\nsuch as 1m or 30s; 0: never by time")
	def("audit-checkpoint-interval", "TOKENVAULT_AUDIT_CHECKPOINT_INTERVAL")
	sealFlags(fs, c)
	return fs
}

// sealFlags defines the flags of the root of trust (-seal and the
// settings of each kind) on fs, writing into c: the server's, and
// restore's. The flags of the registered kinds (Register) follow those of
// the built-in ones.
func sealFlags(fs *FlagSet, c *config) {
	fs.StringVar(&c.seal, "seal", c.seal, "root of trust that wraps every tenant's keys, the `kind`: local (<data>/master.key or TOKENVAULT_MASTER_KEY),\npkcs11 (an AES key that never leaves an HSM), kms-aead (go-kms-wrapping's AEAD wrapper with a key file: for tests),\nsplit (a key split k of n among custodians, <data>/split.json: the server starts sealed; see tokenvault operator -h)"+registeredUsage())
	fs.Bind("seal", "TOKENVAULT_SEAL")
	fs.StringVar(&c.pkcs11Lib, "pkcs11-lib", c.pkcs11Lib, "`path` of the HSM's PKCS#11 module, such as /usr/lib/softhsm/libsofthsm2.so")
	fs.Bind("pkcs11-lib", "TOKENVAULT_PKCS11_LIB")
	fs.StringVar(&c.pkcs11TokenLabel, "pkcs11-token-label", c.pkcs11TokenLabel, "`label` of the PKCS#11 token")
	fs.Bind("pkcs11-token-label", "TOKENVAULT_PKCS11_TOKEN_LABEL")
	fs.StringVar(&c.pkcs11KeyLabel, "pkcs11-key-label", c.pkcs11KeyLabel, "`label` of the AES key in the token; generated there (non-extractable) when a new store first needs it")
	fs.Bind("pkcs11-key-label", "TOKENVAULT_PKCS11_KEY_LABEL")
	fs.StringVar(&c.pkcs11PinFile, "pkcs11-pin-file", c.pkcs11PinFile, "`file` holding the token's user PIN (one line), or TOKENVAULT_PKCS11_PIN")
	fs.Bind("pkcs11-pin-file", "TOKENVAULT_PKCS11_PIN_FILE")
	fs.StringVar(&c.kmsAEADKeyFile, "kms-aead-key-file", c.kmsAEADKeyFile, "`file` holding the key (64 hex digits) of -seal kms-aead, a test of the go-kms-wrapping adapter:\nthe key is on disk, as with local")
	fs.Bind("kms-aead-key-file", "TOKENVAULT_KMS_AEAD_KEY_FILE")
	c.flags = fs
	c.sealSettings = map[string]Settings{}
	c.sealFlagNames = map[string][]string{}
	for _, s := range registered {
		before := map[string]bool{}
		fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
		c.sealSettings[s.Kind] = s.Flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if !before[f.Name] {
				c.sealFlagNames[s.Kind] = append(c.sealFlagNames[s.Kind], f.Name)
			}
		})
		for _, e := range s.EnvOnly {
			fs.envOnly = append(fs.envOnly, struct{ name, usage string }{e.Name, e.Usage})
		}
	}
}

func defaultConfig() config {
	return config{addr: "127.0.0.1:8080", dataDir: "data", store: "bolt", schema: "tokenvault", metrics: true, console: true, elements: true, seal: sealLocal,
		ratePerKey: defaultRatePerKey, ratePerTenant: defaultRatePerTenant,
		sessionsPerApp: tokenvault.DefaultSessionsPerApplication, authFailuresPerMinute: tokenvault.DefaultAuthFailuresPerMinute,
		logRetention: defaultLogRetention, logLevel: slog.LevelInfo, logFormat: "text", gcHeadroomMiB: defaultGCHeadroomMiB,
		smtpTLS: string(smtpmail.StartTLS), smtpTimeout: smtpmail.DefaultTimeout,
		auditFileMaxBytes: auditexport.DefaultFileMaxBytes, auditFileKeep: auditexport.DefaultFileKeep,
		codeMaxResultBytes:   tokenvault.DefaultCodeMaxResultBytes,
		auditCheckpointEvery: tokenvault.DefaultCheckpointEvery, auditCheckpointInterval: tokenvault.DefaultCheckpointInterval}
}

// parseConfig reads the server's configuration from the environment and
// args. -h is flag.ErrHelp, with the usage written to stderr.
func parseConfig(args []string, getenv func(string) string) (config, error) {
	return parseConfigTo(args, getenv, nil)
}

// parseConfigTo is parseConfig writing usage and errors to w (nil: stderr).
func parseConfigTo(args []string, getenv func(string) string, w io.Writer) (config, error) {
	return parseConfigWith(args, getenv, w, nil)
}

// parseConfigWith is parseConfigTo with the flags of a command added to the
// server's by more (nil: none).
func parseConfigWith(args []string, getenv func(string) string, w io.Writer, more func(*FlagSet, *config)) (config, error) {
	c := defaultConfig()
	fs := serveFlags(&c)
	if more != nil {
		more(fs, &c)
	}
	if w != nil {
		fs.SetOutput(w)
	}
	if err := fs.parse(args, getenv); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (commands come first: tokenvault <command> [flags])", fs.Arg(0))
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
	case c.gcHeadroomMiB < 0 || c.gcHeadroomMiB > maxGCHeadroomMiB:
		return c, fmt.Errorf("-gc-headroom must be from 0 to %d MiB, not %d", maxGCHeadroomMiB, c.gcHeadroomMiB)
	case c.cvcRetention < 0:
		return c, fmt.Errorf("-cvc-retention must not be negative, not %s", formatDuration(c.cvcRetention))
	case c.tokenIntentTTL < 0 || c.tokenIntentTTL > tokenvault.MaxTokenIntentLifetime:
		return c, fmt.Errorf("-token-intent-ttl must be from 0 to 48h, not %s", formatDuration(c.tokenIntentTTL))
	case c.ratePerKey < 0 || c.ratePerTenant < 0:
		return c, errors.New("-rate-per-key and -rate-per-tenant must be 0 (no limit) or more")
	case c.logFormat != "text" && c.logFormat != "json":
		return c, fmt.Errorf("-log-format must be text or json, not %q", c.logFormat)
	case c.invitationURL != "" && !absoluteURL(c.invitationURL):
		return c, fmt.Errorf("-invitation-url must be an absolute URL such as https://app.example.com/join, not %q", c.invitationURL)
	case c.smtpHost == "" && (c.smtpUser != "" || c.smtpPasswordFile != "" || c.smtpFrom != "" || c.smtpPort != 0):
		return c, errors.New("-smtp-user, -smtp-password-file, -smtp-from and -smtp-port need -smtp-host")
	case c.masterKeyFile != "" && strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")) != "":
		return c, errors.New("-master-key-file and TOKENVAULT_MASTER_KEY exclude each other: give the master key one way")
	case c.masterKeyFile != "" && c.seal != sealLocal:
		return c, fmt.Errorf("-master-key-file is the key of -seal local, not of -seal %s", c.seal)
	case c.codeMaxResultBytes <= 0:
		return c, errors.New("-code-max-result-bytes must be positive")
	case c.codeWorkers < 0 || c.codeConcurrencyPerTenant < 0:
		return c, errors.New("-code-workers and -code-concurrency-per-tenant must be 0 (the default) or more")
	case c.codeWorkers > 0 && c.codeConcurrencyPerTenant > c.codeWorkers:
		return c, fmt.Errorf("-code-concurrency-per-tenant (%d) must not exceed -code-workers (%d)", c.codeConcurrencyPerTenant, c.codeWorkers)
	case c.auditFileMaxBytes <= 0 || c.auditFileKeep < 0:
		return c, errors.New("-audit-file-max-bytes must be positive and -audit-file-keep 0 or more")
	case c.auditCheckpointEvery < 0 || c.auditCheckpointInterval < 0:
		return c, errors.New("-audit-checkpoint-every and -audit-checkpoint-interval must be 0 (off) or more")
	case c.smtpHost != "" && c.smtpFrom == "":
		return c, errors.New("-smtp-host needs -smtp-from, the sender of invitation e-mails")
	}
	if err := checkSeal(c, getenv); err != nil {
		return c, err
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

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && u.Host != ""
}

// logger writes structured logs to w in format (text or json) from level
// up.
func logger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// stringList is a flag that may be given more than once.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }
