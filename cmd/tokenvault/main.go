// Command tokenvault runs Token Vault as a standalone HTTP service, and
// administers it.
//
//	go run ./cmd/tokenvault                  # or, from a clone: go install ./cmd/tokenvault
//	tokenvault [serve] [flags]               # serve the API (the default command)
//	tokenvault version                       # version and revision (stamped by go run ./internal/release)
//	tokenvault rotate-master-key [flags]     # replace the master key (or -to pkcs11: into an HSM), then exit
//	tokenvault tenant create|list|delete     # administer tenants of a running server
//	tokenvault backup -o FILE                # snapshot a running server's store
//	tokenvault restore -i FILE -data DIR     # make a data directory of a backup
//	tokenvault <command> -h                  # every flag, with its environment variable
//
// With no flags it listens on 127.0.0.1:8080, stores data in
// ./data/vault.db (bbolt), creates a master key file ./data/master.key
// (0600) on first run unless TOKENVAULT_MASTER_KEY holds one (64 hex
// digits), and creates a tenant with a management application on first
// run, whose key it writes to ./data/management.key (0600): read it from
// there (KEY=$(cat data/management.key)). The key is never written to the
// log (stdout). A short banner on stderr says where it is, and shows the
// key itself only when stderr is a terminal; a server whose output is
// collected (a container, a pipe) never prints it.
//
// The server binds its address before it touches the data directory: a
// port in use fails at once, naming -addr and TOKENVAULT_ADDR, with nothing
// created, bootstrapped or printed. A second server on a data directory
// another one holds fails within about a second saying that one is
// already running there (bbolt locks its file). A data directory without
// management.key (restored from a backup, copied, or another instance's)
// is said to have none: its tenants' keys are held by whoever was given
// them.
//
// Durations are written 30s, 15m, 36h or, in days, 400d (or 400 days);
// -h prints defaults that way. Every flag has an environment variable
// (-addr and TOKENVAULT_ADDR, ...);
// a flag given on the command line wins over its variable. -h lists them
// all, with the one setting that is an environment variable only
// (TOKENVAULT_MASTER_KEY: a secret does not belong on a command line).
// -log-level (debug, info, warn, error) and -log-format (text, json) shape
// the log. Request lines are written in blocks, within 100 ms; other lines
// at once. -gc-headroom (12 MiB) is the least the heap may grow between
// garbage collections (GOGC in the environment overrides it).
//
// rotate-master-key generates a new master key, re-wraps every tenant's
// keyring with it in one transaction (records are sealed with data keys
// and are not rewritten) and then replaces master.key; the old key no
// longer opens the store, but it still opens every backup taken before
// the rotation, so it is kept as master.key.<key id> (0600, the id 8 hex
// digits derived from the key), and the command logs (at Warn) both key
// ids, that file, and the command that restores those older backups:
//
//	tokenvault restore -i OLD.backup -data NEW-DIR -master-key-file data/master.key.<key id>
//
// Keep that file with (but apart from) the backups it opens until they
// expire, then remove it. The new key goes to master.key.new first, so a
// crash at any point (kill -9) is finished by the next start or the same
// command; the temporary files a crash can leave (master.key.*.tmp*) are
// removed then. With several instances
// on PostgreSQL, stop the others, rotate on one, and copy its master.key to
// the others before starting them. A key given in TOKENVAULT_MASTER_KEY is
// rotated by whoever sets it (Vault.RotateMasterKey, PreviousMasterKeys).
//
// # Root of trust (-seal)
//
// -seal (TOKENVAULT_SEAL) says what wraps every tenant's keys: local (the
// default: <data>/master.key or TOKENVAULT_MASTER_KEY), pkcs11 (an AES key
// that never leaves an HSM; package keywrap/pkcs11), or kms-aead
// (go-kms-wrapping's AEAD wrapper with its key in -kms-aead-key-file: a test
// of package keywrap/kms, no safer than local). The cloud KMS kinds
// (awskms, gcpckms, azurekeyvault, transit) are in the tokenvault of
// contrib/cloudkms, a module of its own that keeps their SDKs out of this
// one (cd contrib/cloudkms && go build -o tokenvault ./cmd/tokenvault);
// this binary, given one of them, fails and names it. The command itself
// is package internal/cli, which both binaries run. For pkcs11:
//
//	-pkcs11-lib TOKENVAULT_PKCS11_LIB                  the HSM's PKCS#11 module
//	-pkcs11-token-label TOKENVAULT_PKCS11_TOKEN_LABEL  the token
//	-pkcs11-key-label TOKENVAULT_PKCS11_KEY_LABEL      the AES key, generated in the
//	                                                   token (non-extractable) when a
//	                                                   new store first needs it
//	-pkcs11-pin-file TOKENVAULT_PKCS11_PIN_FILE        the user PIN, or TOKENVAULT_PKCS11_PIN
//	                                                   (never a flag)
//
// With -seal pkcs11 no master key is read, written or taken from the
// environment. The server logs in to the token before it writes anything:
// a wrong module, token label or PIN, or a key that does not open the
// store, stops it with an error and leaves the data directory as it was.
//
// rotate-master-key -to local|pkcs11|kms-aead moves the store from the root
// of trust the -seal flags describe to another, re-wrapping every keyring
// in one transaction: -to pkcs11 (with the -pkcs11-* flags, and
// -to-pkcs11-key-label for a new key of the same token) then removes
// master.key; -to local writes a new master.key (through master.key.new).
// Running the same command again after a crash finishes it. restore takes
// the same -seal flags to check a backup of such a store.
//
// Next to the API it serves these routes, none of which needs a key:
//
//	GET /healthz  200 while the process serves (liveness)
//	GET /readyz   200 when the store answers and writes commit, 503 otherwise (readiness)
//	GET /metrics  Prometheus metrics, the text format 0.0.4 unless the scraper
//	              asks for another (unless -metrics=false)
//
// Every API request is logged at Info once answered, from httpapi's Observe
// hook: msg=request with method, route (the pattern, such as /tokens/{id},
// not the path, which holds ids; "unmatched" for a 404 or 405), status,
// duration, and tenant (the tenant whose key was accepted; absent when
// none was). Bodies, headers, query strings and keys are never logged.
// Methods other than the standard ones are logged and counted as "other".
// The probes and /metrics are counted in the metrics but not logged: they
// are polled every few seconds and their lines would drown the API's.
//
// /metrics is served with github.com/prometheus/client_golang (package
// prommetrics; metrics.go here): the Go runtime (go_*) and process
// (process_*) collectors; the requests,
// tokenvault_http_requests_total{method,route,status}, the histogram
// tokenvault_http_request_duration_seconds{method,route} and the gauge
// tokenvault_http_requests_in_flight, with the names they had when they
// were written by hand; and the Vault's own: tokens created, read,
// updated, deleted and detokenized, runs of reactors and transforms by
// outcome with their latency, sandbox workers alive and busy, async
// invocations and pending webhooks, webhook deliveries, sweeps and what
// they removed, bbolt commit latency and batch size. Package prommetrics
// lists every name and label set. Labels are bounded (route patterns,
// standard methods, status codes, fixed sets of outcomes and kinds), so no
// client can grow them by scanning. There is no tenant label: tenants are
// created without limit and each would multiply the series. /metrics
// reveals counts, not data; keep it off the public network like the
// probes, or turn it off.
//
// client_golang used to be avoided here, for the modules it brings
// (client_model, common, procfs, protobuf, ...) into a security library's
// module graph; the runtime, process and domain metrics are worth them,
// and the library itself (package tokenvault) still imports none of them:
// it reports through the tokenvault.Metrics interface.
//
// # Operator key, tenants, backups
//
// The server also serves the operator API under /operator/ (see package
// httpapi) to its operator key: a random key it writes to
// ./data/operator.key (0600) on first run, unless -operator-key-file names
// another file or TOKENVAULT_OPERATOR_KEY holds one (at least 16
// characters). The log names where the key came from, never the key. The
// operator key opens nothing else, and no tenant key opens /operator/. A
// server started on a store without tenants (a new one, or one whose
// tenants were all deleted) bootstraps a Default tenant again and rewrites
// management.key.
//
// tenant, backup and restore are the operator's commands. tenant and backup
// call a running server (-server, TOKENVAULT_SERVER, default
// http://127.0.0.1:8080) with the operator key (TOKENVAULT_OPERATOR_KEY, or
// -operator-key-file, TOKENVAULT_OPERATOR_KEY_FILE, default
// ./data/operator.key); what one invocation acts on (a name, an id, a file)
// is given on its command line only. A server they cannot reach is named
// with the cause (connection refused, timeout, TLS) and the setting
// (-server); a key it refuses, with where it was read and the settings
// that give another.
//
//	tokenvault tenant create [-owner-email A] [-application-name N] NAME
//	                                         # prints the tenant as JSON, with
//	                                         # its management key (shown once)
//	tokenvault tenant list                   # id, name, creation time
//	tokenvault tenant delete TENANT-ID       # the tenant and all of its data
//
// tokenvault backup -o FILE writes a consistent snapshot of a bbolt store
// while the server keeps serving (every write acknowledged before it began
// is in it) to a temporary file next to FILE, checks that it is a whole
// bbolt database, and only then renames it to FILE: a failed backup leaves
// no partial file. On PostgreSQL the server answers 422: use pg_dump or
// pg_basebackup. A backup is as encrypted as the store and holds no master
// key; keep master.key elsewhere, and keep the key each backup was taken
// under (rotate-master-key replaces it, and keeps the one it replaced as
// master.key.<key id>).
//
// tokenvault restore -i FILE -data DIR makes DIR (missing, or empty but for
// master.key and operator.key: restore never overwrites) the data directory
// of the backup. The master key comes from TOKENVAULT_MASTER_KEY, or from
// -master-key-file (the backed-up server's master.key, or for a backup
// older than a rotation the master.key.<key id> it kept; copied to
// DIR/master.key), or from DIR/master.key; restore checks that FILE is a
// whole bbolt database and that the key opens it before it links
// DIR/vault.db. A key that does not open it is refused naming the key id
// the backup needs and the id of the key given. Then: tokenvault serve
// -data DIR.
//
// Several instances can serve one PostgreSQL database: give them the same
// -dsn, -schema and master key (TOKENVAULT_MASTER_KEY). The first instance
// to start on an empty database bootstraps the tenant; start one first.
//
// # E-mail (invitations)
//
// Tenant invitations are e-mailed over SMTP (package smtpmail) when
// -smtp-host is set:
//
//	-smtp-host TOKENVAULT_SMTP_HOST        the SMTP server
//	-smtp-port TOKENVAULT_SMTP_PORT        default by -smtp-tls: 587, 465 or 25
//	-smtp-tls TOKENVAULT_SMTP_TLS          starttls (default: required, never skipped),
//	                                       tls (implicit, port 465), none (clear text,
//	                                       loopback hosts only)
//	-smtp-user TOKENVAULT_SMTP_USER        user name; the password comes from
//	-smtp-password-file TOKENVAULT_SMTP_PASSWORD_FILE, or TOKENVAULT_SMTP_PASSWORD
//	                                       (never a flag: command lines are public)
//	-smtp-from TOKENVAULT_SMTP_FROM        the sender, "Token Vault <vault@example.com>"
//	-smtp-timeout TOKENVAULT_SMTP_TIMEOUT  bound on one send (default 30s)
//	-invitation-url TOKENVAULT_INVITATION_URL  the page the e-mail links to, with
//	                                       ?token=...; without it the e-mail holds the
//	                                       token and how to POST it to
//	                                       /tenants/invitations/accept
//
// The server's certificate is checked against the system roots (a private
// CA: SSL_CERT_FILE). A failed send answers 503 and saves nothing; the log
// says why (the SMTP reply), without the token, link or address.
//
// Without -smtp-host the server says at start that invitations cannot be
// e-mailed. Creating one still succeeds, and the log notes it (tenant,
// invitation id, recipient's domain), but its link is sent nowhere and
// never logged, so nobody can accept it: configure SMTP for invitations to
// be usable, then resend them (a resend e-mails a new link). Acceptance
// tokens and links never appear in the log.
//
// SIGINT or SIGTERM shuts it down gracefully: it stops accepting
// connections, requests in flight finish (for up to 30 s; connections still
// busy after that are closed) and the database is closed cleanly. A second
// signal during that wait ends the process at once; nothing acknowledged
// is lost (bbolt commits are durable before a request is answered).
//
// Timeouts: request headers must arrive within 10 s and the whole request
// within 30 s (ReadHeaderTimeout, ReadTimeout); a response must be written
// within 2 minutes of the request's headers (WriteTimeout: room for a proxy
// call, whose destination may take up to 60 s, and its transforms); an idle
// keep-alive connection is closed after 2 minutes (IdleTimeout).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tokenvault/tokenvault/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// Once the graceful shutdown has begun, give the signals back
		// their default action: a second one ends the process at once,
		// as an operator who sends it means. The store is crash-safe.
		<-ctx.Done()
		stop()
	}()
	os.Exit(cli.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
