// Package tokenvault is an embeddable, multi-tenant data-tokenization
// service: sensitive values go in, token ids come out, and the values are
// kept encrypted at rest and read back only through keys and access rules.
//
// A [Vault] has a typed method for every operation of the service. Every
// method takes the caller's key (an application's API key or a session key)
// explicitly and checks the permission the operation needs, so a program
// that calls the Vault in-process gets exactly the security an HTTP caller
// gets through package httpapi.
//
//	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: "vault.db", MasterKey: key})
//	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
//	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
//		Name: "backend", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate},
//	})
//
// # Storage and encryption
//
// A Vault keeps everything in a [store.Store], an ordered transactional
// key-value store (bbolt by default; package store/memory for tests). Every
// write that touches several records (a record, its indexes and its audit
// log line) is one store transaction. Every value written under a tenant is
// sealed with XChaCha20-Poly1305 under the tenant's data key, with the store
// key as additional data; tenant data keys are wrapped by the root of
// trust given in [Options] (see below). [Vault.RotateMasterKey],
// [Vault.RotateKeyWrapper] and [Vault.RotateDataKey] rotate without
// downtime: ciphertexts carry their key term and old terms still open. API
// keys are stored only as keyed hashes (HMAC-SHA256: the keys carry 256
// random bits, so a slow hash would add nothing).
//
// On a store one process holds (bbolt, memory) three things differ, for
// the speed of durable writes: creating, reading and detokenizing tokens run
// their transaction first beside the store's single writer and then only
// check and put what they wrote (optimistic.go), and the fingerprint index
// that deduplication and the fingerprint filter use is kept in memory,
// rebuilt from the token records when the Vault opens (about 1.4 s and
// some 30 MB for a million tokens), instead of in the store, where each
// token was an insert at a random place of the B-tree (fpindex.go); and
// the audit line of a read is written without a commit of its own. On
// bbolt (a [store.Appender]) a read that wrote nothing but its audit line
// and the line's entries appends them to the store's append log, synced
// before the read is answered and folded into the file a fraction of a
// second later (appends.go; store/bolt); whatever reads or removes lines
// (ListLogs, export, retention, re-sealing, tenant deletion, backups)
// folds first, so nothing answers differently. On the memory store the
// line is committed, and its entity index entry comes from a background
// indexer a fraction of a second later (logindex.go): log queries by
// entity or entity type read the lines not yet indexed too. A store shared
// by several instances (PostgreSQL) keeps the fingerprint index in the
// store and indexes every line with its write.
//
// # Root of trust: the master key, an HSM or a KMS
//
// A [KeyWrapper] (Options.KeyWrapper) is the only way the Vault reaches its
// keys: it wraps the system keyring and every tenant's keyring before they
// are stored, and unwraps them when they are read. Options.MasterKey is the
// shorthand of the local one ([NewLocalKeyWrapper]: a 32-byte key held by
// the process); package keywrap/pkcs11 keeps an AES key in an HSM, where
// it cannot be read out, and package keywrap/kms adapts any go-kms-wrapping
// wrapper (cloud KMSs, Vault or OpenBao transit). KeyWrapper and MasterKey
// exclude each other.
//
// Each wrapped keyring is stored as an envelope: a version byte (2), the
// wrapper's kind, key id and version (each length-prefixed), then the
// wrapper's ciphertext, whose additional data is the keyring's store key.
// Keyrings written before key wrappers existed (seal's format, first byte
// 1, wrapped by a bare master key) still open with that master key, are
// counted as legacy by [Vault.WrappedKeys], and are rewrapped into
// envelopes by any rotation. A store written by this version no longer
// opens with older versions.
//
// [Vault.RotateKeyWrapper] re-wraps every keyring under a new wrapper (a
// new key of the same kind, or another kind: local to HSM and back) in one
// transaction while the Vault serves; running it again is harmless, so an
// interrupted rotation is finished by opening with both wrappers
// (Options.PreviousKeyWrappers) and rotating again. Open fails with
// [ErrWrongMasterKey] when no wrapper opens the system keyring, and then
// writes nothing to the store.
//
// # Errors
//
// Methods return *[Error], whose [Kind] says what went wrong (Invalid,
// Unauthenticated, PermissionDenied, NotFound, ...) and whose Fields name
// the offending values. errors.Is(err, ErrNotFound) matches by kind.
// Another tenant's resource is NotFound, never PermissionDenied, so keys
// cannot probe for what exists.
//
// Names (of tenants, applications, reactors, proxies, formulas and their
// configuration and request parameters, users), metadata keys, custom
// token ids and containers hold no control character (NUL, escape,
// newline, C1): one is Invalid naming the field, whether it is set or
// queried by (names.go).
//
// A write the store refuses for a full disk is StorageFull (HTTP 507), not
// Internal: nothing was saved, and the same call succeeds once space is
// freed, without a restart. [Vault.Ready] fails meanwhile, so that a
// readiness probe takes the instance out of rotation (storage_full.go).
//
// JSON a caller passes (bodies as json.RawMessage, Go values, patches,
// reactor arguments, proxy bodies) must hold valid Unicode: a string or key
// that is not UTF-8, or a lone UTF-16 surrogate escape ("\ud800"), is
// Invalid with its path ("data.name", "[2].data", "args.card.number"), not
// stored or forwarded as the U+FFFD encoding/json would make of it. A key
// given twice in one object is Invalid too, naming the member ("data.a"):
// encoding/json would keep its last value and drop the others without a
// word. A destination's answer to a proxy is the destination's affair: its
// response transform reads it keeping the last, as JSON.parse does. So is
// what tenant code hands over: a string or key with a lone surrogate in a
// result, a CustomHttpResponseError body or a req.client call fails the
// export (RuntimeFailure, 500, naming its path; in a client call, an Error
// the code can catch) rather than come out as U+FFFD or be left out.
//
// # Tenant code
//
// Reactor and formula code and proxy transforms are JavaScript written by
// tenants. None of it runs in the Vault's process: every check of code when
// it is saved, and every run (synchronous, asynchronous, request and
// response transforms), happens in a sandbox worker process from a pool
// (internal/sandbox). A worker is the host's own executable started again
// in worker mode: the sandbox package's init recognises a marker in the
// environment, serves the worker protocol on its standard input and output,
// and exits before the program's main runs. So a program that embeds the
// Vault, a go test binary included, needs nothing of its own to run code,
// and a worker always speaks its Vault's protocol (on Linux it is started
// from /proc/self/exe, the very binary running). Before it reads any code a
// worker clears its environment, closes inherited descriptors, and applies
// OS limits: RLIMIT_DATA (Options.CodeMemoryBytes, default 256 MiB, over
// what the Go runtime had mapped) and RLIMIT_AS (twice that plus 128 MiB
// over its address space: the kernel does not charge every mapping to
// RLIMIT_DATA), RLIMIT_CPU, no core dumps or files
// written, and a seccomp filter that refuses (EPERM) starting processes,
// opening files and creating sockets. The worker holds no key and no data
// key: req.client calls and fetch come back over the pipe and are carried
// out here, with the reactor's or proxy's application and the outbound
// policy of proxies.
//
// A worker past its deadline (plus 0.5 s) is killed (SIGKILL) and replaced;
// one that dies (out of memory, native stack overflow, a signal) fails only
// its own invocation. Such a failure is CodeFailed with status 500 and
// [Error.Stop] saying why: [CodeTimedOut], [CodeOutOfMemory] or
// [CodeCrashed]; over HTTP the message says it ("the code did not finish in
// time", "the code used too much memory"), for proxies as proxy_error.
//
// An error the code throws is answered with its message (an Error, the
// error classes, CustomHttpResponseError), but the JavaScript engine's own
// errors (TypeError, ReferenceError, RangeError, SyntaxError, URIError,
// EvalError, AggregateError) are answered with their class alone: their
// messages quote the values the code failed on ("Cannot read property
// '4111111111111111' of undefined"), which may be detokenized data the
// caller may not read. The host's own TypeErrors (req.client, fetch,
// crypto, TextDecoder) keep theirs. Code that wants a message for such a
// failure catches it and throws an Error of its own.
//
// An idle worker is kept for reuse (programs compiled by code hash), retired
// after 30 s idle beyond two warm ones, or at once after a large invocation
// (over 1 MiB sent or received, or a heap grown past 32 MiB), so that idle
// workers do not keep what it took.
//
// What one run gives back (a reactor's result, a transform's result and
// the body it builds, a CustomHttpResponseError's body) is at most
// Options.CodeMaxResultBytes as JSON (default 4 MiB); more is TooLarge
// (413) naming the limit. A worker cannot make the Vault read more than
// that from its pipe.
//
// Fairness: at most Options.CodeWorkers workers (default 16) run at once,
// and one tenant holds at most Options.CodeConcurrencyPerTenant of them
// (default half); further invocations wait for a slot within their own
// time, then fail with Unavailable (503). Beyond its first invocation, a
// tenant runs code only in a shared part of CodeConcurrencyPerTenant
// workers; the rest are kept for tenants with nothing running. So a tenant
// with nothing running starts at once unless CodeWorkers −
// CodeConcurrencyPerTenant + 1 other tenants (9 by default) are running
// code, however slow, and a freed worker goes to the waiting tenant with
// the fewest invocations running. Asynchronous invocations count
// against the same slots while they run; their webhook deliveries and
// retries hold none. A tenant has at most [MaxAsyncInvocations] running
// and [MaxPendingWebhooks] being delivered, past which its own
// asynchronous calls are Unavailable.
//
// Options.TrustedCodeInProcess runs code in the Vault's process instead:
// for code the host trusts entirely, never for code tenants save.
//
// What code receives, as req:
//
//   - A reactor: req.args (the invocation's args, detokenized, shaped by
//     the formula's request_parameters), req.configuration (the reactor's
//     configuration), req.client (see below; null when the reactor has no
//     application). It returns {raw, tokenize}: raw is answered as is,
//     tokenize is tokenized (with the reactor's application, or the
//     caller's key) and answered as tokens.
//   - A request transform: req.args = {body, headers, method, path, query}
//     (body parsed and detokenized for JSON and form bodies, headers an
//     object of strings, path the part after /proxy, query "" or starting
//     with "?"), req.configuration (the proxy's), req.client. It returns
//     {body, headers}; either may be left out to keep the input's.
//   - A response transform: req.args = {body, headers} of the destination's
//     answer (parsed for JSON and form bodies; other bodies, and answers of
//     status 400 and above, pass through untransformed), req.configuration,
//     req.client. It returns {body, headers} as above.
//
// A transform's headers are an object of strings, numbers (written as
// JavaScript writes them) or booleans, or arrays of them (one line each);
// null leaves a header or an element out, and any other value fails the
// code. A CustomHttpResponseError's header values are made text (objects
// as JSON, arrays joined with ", "). In both, Content-Length,
// Transfer-Encoding and the other hop-by-hop headers are left out, since
// the Vault frames what it sends, and a name or value that cannot be sent
// (a line break) fails the code with CodeFailed 500 naming
// headers.<name>.
//
// req.client has tokenize(body), detokenize(body), getToken(id) and
// deleteToken(id), synchronous, acting with the permissions of the
// configured application. Globals: console (with Options.LogCodeConsole, to
// the Vault's Logger at debug level with tenant and reactor or proxy ids;
// dropped by default, since the code holds detokenized data; never to the
// caller), timers,
// queueMicrotask, atob, btoa, Buffer, URL, URLSearchParams, TextEncoder,
// TextDecoder, Headers, fetch and the service's error classes. require
// accepts buffer, url, util, crypto (a subset) and @svc/errors, with or
// without node:. There is no eval, Function constructor, file system,
// process or network but fetch.
//
// fetch(url, init) is carried out by the Vault through the outbound policy
// of proxies (loopback, private and link-local destinations refused unless
// Options.AllowPrivateDestinations), at most [MaxFetchesPerInvocation]
// requests of [MaxFetchRequestBytes] each per invocation, answers of at
// most [MaxFetchResponseBytes], within the invocation's deadline. A refused
// or failed fetch rejects with a TypeError whose message says why without
// quoting the URL. Redirects are never followed: a 3xx answer resolves the
// fetch as it came with redirect "follow" (the default) or "manual", and
// rejects it with a TypeError with redirect "error".
//
// # Idempotency
//
// [Vault.Idempotent] runs a creating call at most once per caller and
// idempotency key; package httpapi applies it to every creating POST that
// carries an Idempotency-Key header. A repeat with the same key, caller
// (the application or session the key authenticates, within its tenant)
// and request within [IdempotencyWindow] (24 hours) answers the first
// response without running again; the same key with another request is
// Unprocessable (422); a repeat while the first still runs is Conflict
// (409), not held waiting. The key is claimed in a store transaction
// before the call runs, so instances sharing a PostgreSQL store cannot
// both run it; a claim lasts [IdempotencyLease] (5 minutes: the run is
// cancelled then), after which a claim left by a crashed instance is taken
// over. Only responses of status 200 to 499 other than 429 are kept; an
// error, a 5xx, a 429 or a panic releases the key so that a retry runs
// again (a Vault operation that fails writes nothing). Records are sealed
// with the tenant's data key (a kept response may hold token data, API
// keys or session keys), stored under a keyed HMAC of caller and key (the
// key as given is stored nowhere), and removed by the sweeper once the
// window has passed. Keys are 1 to [MaxIdempotencyKeyLength] printable
// ASCII characters, else Invalid.
//
// # Rate limits
//
// Over a limit a call fails with RateLimited (HTTP 429 with Retry-After),
// and Error.RetryAfter says when to try again. Options.RatePerKey and
// Options.RatePerTenant bound calls per second of one key and of one
// tenant (no limit by default); the calls of a public application's key
// are counted per client address in both, as its key is every browser's.
// Options.SessionsPerApplication bounds the
// sessions one public application creates from one client address (5 a
// second, 50 at once, by default); another address has its own budget,
// so a holder of the public key (it is in every browser) cannot use up
// everyone's.
//
// Options.AuthFailuresPerMinute bounds the failed authentications of one
// client address (100 by default). Only failures are throttled: once an
// address has used them up, its further failures are RateLimited instead
// of Unauthenticated, whatever made them fail; a key that authenticates
// (an API or session key, a proxy key, a call to a proxy that needs no
// key, package httpapi's operator key) is never refused by it, so failures
// sent from an address many clients share (a NAT, a reverse proxy) lock
// nobody out. The client address comes from the call's [CallInfo]
// (httpapi sets the connection's); an IPv6 address counts as its /64, an
// IPv4-mapped address as the IPv4 one, and every value that is not an IP
// address as one address together, so made-up values are never new
// addresses. In-process callers without an address are not throttled for
// failed authentications, and share one session budget per application.
//
// Every limit is charged exactly once per call, however many store
// transactions the call runs and however often the store runs one again
// (group commit, optimistic retries), and a call refused once stays
// refused, so concurrency admits no more than the limits: the burst, plus
// what refills. Buckets never step back in time.
//
// The rate limits are kept in each Vault's memory, on its clock (Options.Now):
// instances sharing a PostgreSQL store each apply them separately, so N
// instances admit up to N times each limit. Buckets idle long enough to
// be full again are forgotten, so memory is bounded by recent callers.
//
// # Sessions waiting for authorization
//
// A session waits for authorization from its creation until AuthorizeSession
// or its expiry (SessionLifetime). Waiting sessions are capped in the
// store, so across instances: Options.MaxPendingSessionsPerAddress (100 by
// default) per public application and client address, and
// Options.MaxPendingSessionsPerApplication (1000 by default) per public
// application. A creation past a cap is not refused: it evicts the oldest
// waiting session of that address (when the address is at its cap), else
// of the application, in its own transaction, and logs "Session evicted".
// So a flood from one address only replaces its own sessions, a flood from
// many keeps the newest (the ones about to be authorized), storage stays
// bounded, and nobody is refused for what others did. An evicted session's
// nonce is then unknown to AuthorizeSession (Invalid): the creating flow
// starts again.
//
// # Keys learn only what they may read
//
// A key may read a token when it holds token:read on the token's
// containers, through its permissions or rules, with any transform. Keys
// that may create or update tokens without reading them (every public
// application; private ones scoped so) must not learn from the answers
// anything of the tokens they cannot read: otherwise a key with
// token:create alone could tokenize every Luhn-valid number with a known
// BIN and last four and match fingerprints, or be handed an existing
// token's id by deduplication, and so recover a card number.
//
//   - Fingerprints appear only in answers to a key that may read the token
//     (create, update, get, list, search, reactor tokenize results,
//     req.client). A key that may not read never sees one, not even of the
//     value it just sent: a fingerprint of a guess is what is compared.
//   - Deduplication (deduplicate_token) matches only tokens the key may
//     read; a key that may not read gets a new token every time, so the
//     answer to a right guess is the answer to a wrong one.
//   - A create answer to a key that may not read the new token carries what
//     it sent: id, type, containers, metadata, search_indexes, expressions,
//     timestamps, and the mask of its own value (it knows that value, and
//     the mask shows less of it), data as the transform of token:create
//     allows (never a card or bank account); no fingerprint.
//   - An update answer (PATCH /tokens/{id}) to a key that may not read the
//     token carries its id, tenant, type, containers, expiry, deduplicate
//     flag, timestamps and actors only: no data, mask, fingerprint,
//     fingerprint expression, metadata or search indexes, which are the
//     stored record's. A card patch sending data is checked for expiry
//     whether or not it repeats the stored card (a check skipped for an
//     unchanged card would tell a right guess from a wrong one); a patch
//     moving a token to containers where the key's token:read access would
//     be wider than where it is is PermissionDenied. Its patch that sets a
//     mask, search_indexes or fingerprint_expression together with data
//     replaces the data whole instead of merging it, so the answer does not
//     depend on which fields are stored.
//   - Search alone (token:search without token:read on a token's
//     containers) finds a token but does not read it. The result carries
//     the token's identity and placement (id, tenant, type, containers,
//     expiry, deduplicate flag, timestamps, actors) and its data as the
//     token:search transform shows it (the mask by default, as in the
//     service we follow); never what is stored with it: no fingerprint,
//     metadata, search indexes, mask field or expressions. A data: term
//     matches search indexes, whose values the caller sends. A metadata
//     or fingerprint term tests a value against what only token:read
//     shows, so it matches only tokens the key may read, and a key without
//     token:read anywhere gets PermissionDenied for it, as it does from
//     ListTokens (GET /tokens?metadata.k=v): the same question gets the
//     same answer by either route. ListTokens needs token:read and shows
//     only tokens the key may read.
//
// Keys that may read a token see its fingerprint and may test values
// against it by tokenizing them (a fingerprint is a keyed MAC of the value,
// as stable as the value): grant token:read only where that is acceptable.
//
// # Token ids are not secret
//
// A custom id (TokenRequest.ID) that a live token of the tenant holds is a
// Conflict ("a token with this id exists", no fields), the same answer
// whatever the existing token's type and container and whether the caller
// could read it; it tells that the id is taken, nothing else. Ids are
// unique per tenant, so their existence cannot be hidden from a key that
// may create tokens: never derive custom ids from sensitive data (an order
// number is fine, a card number, e-mail address or its hash is not).
//
// # Card verification codes
//
// A card's cvc is kept for Options.CVCRetention after it was written
// (default [DefaultCVCRetention], one hour; negative is an error from
// Open): by tokenizing, or by a patch that sends a cvc, which starts a new
// window (a patch that does not send one keeps the old window). When the
// window ends the cvc is left out of every read at once (get, list,
// search, detokenize, reactor arguments, proxy bodies, req.client, and the
// stored data a patch merges into), whether or not the sweeper has run;
// the sweeper ([Vault.Sweep]) then writes each such card again without it,
// at most 100 cards per store transaction, with a log line "Card cvc
// removed (retention)" by the system actor. Masks, fingerprints and search
// indexes of cards are evaluated over the data without the cvc, so
// nothing derived from it outlives it. Cards stored before cvc retention
// existed count from their last write (modified_at, else created_at); the
// first sweep of such a store visits every token once, in batches, to
// remove or schedule their cvcs.
//
// # Operator operations
//
// A few methods take no key: they are the host's own, for the program that
// embeds the Vault or for its operator. [Vault.CreateTenant] creates a
// tenant with its OWNER member and a first management application (whose
// key it returns once); [Vault.ListTenants] (paginated by id, with a
// cursor) and [Vault.GetTenantByID] read tenants; [Vault.DeleteTenant]
// deletes one; [Vault.Backup] writes a snapshot; [Vault.RotateMasterKey]
// and [Vault.Sweep] maintain the store. Package httpapi offers the tenant
// operations and backups over HTTP to an operator key (its
// Options.OperatorKey), which [Vault.AuthenticateOperator] lets count in the
// failed-authentication throttle. Operator reads are not written to the
// tenants' audit logs (the tenant's own GetTenant is).
//
// # Deleting a tenant
//
// [Vault.DeleteTenant] removes every key of the tenant from the store:
// everything under tenant/<id>/ (records, indexes, audit log, idempotency
// records, keyring) and its entries under sys/ (API and session key,
// nonce, invitation link and proxy key lookups, expiry and cvc schedule
// entries, the re-seal marker, the registry entry). Its first transaction
// removes the tenant from the registry, deletes its keyring (so nothing of
// it can be decrypted any more, before a single record is removed) and
// records the deletion at sys/deleting/<id>; from its commit on every key
// of the tenant is Unauthenticated (authentication reads the marker; the
// auth cache and the cached keyring are dropped before DeleteTenant goes
// on), its proxy keys are unknown and its invitation links NotFound. The
// rest is done in transactions of at most 500 keys, each recording its
// progress in the marker, and a last one that removes the marker once
// nothing is left under tenant/<id>/. A deletion interrupted by a crash,
// a store failure or a cancelled context is finished by [Vault.Sweep]
// (the background sweeper runs it as soon as Open starts it, then every
// interval) or by calling DeleteTenant again; meanwhile the tenant stays
// refused and unlisted. Nothing records the deletion in the tenant's own
// log, which goes with it: the host should log who deleted what.
//
// # Backups
//
// [Vault.Backup] writes a consistent snapshot of the whole store while
// the Vault keeps serving, through the optional [store.Snapshotter]
// interface: store/bolt writes its database file as of one read
// transaction (bbolt's Tx.WriteTo), so every write acknowledged before
// Backup began is in it; the copy opens with bolt.Open or as
// Options.Path. store/memory and store/postgres do not implement it
// (Backup returns [ErrNoSnapshot], Unprocessable): back PostgreSQL up with
// pg_dump or pg_basebackup. A snapshot is exactly as encrypted as the
// store (tenant values sealed with data keys, which the master key or key
// wrapper wraps) and never holds the master key, which is not in the
// store: keep the master key apart from the backups, and keep the key a
// backup was taken under for as long as the backup (after
// [Vault.RotateMasterKey] or [Vault.RotateKeyWrapper], open older backups
// with the old key or wrapper, or give it in PreviousMasterKeys or
// PreviousKeyWrappers).
//
// # Metrics
//
// Options.Metrics, a [Metrics], receives counts and timings as the Vault
// works: token operations once their transaction commits, runs of reactors
// and transforms by [CodeOutcome] with their duration, webhook deliveries,
// sweeps and what they removed, audit export deliveries per sink, and the
// commits of the bbolt file the Vault opens for Options.Path
// (bolt.Options.OnCommit for a store the host opens). [Vault.Stats] gives
// the gauges (sandbox workers alive and busy, asynchronous invocations,
// pending webhooks, each audit sink's lag) for a collector to read when
// scraped. Every value passed is a number or one of a fixed set of
// constants (an audit sink's name is one the operator chose), never an id,
// key or anything a caller sent, so an implementation may use them as
// labels. This package imports no monitoring library; package prommetrics
// exports all of it to Prometheus. Nil Metrics measures nothing and costs
// a nil check.
//
// # Audit export
//
// Options.AuditSinks, each an [AuditSink] (package auditexport has a file
// with rotation, RFC 5424 syslog over UDP or TCP, and signed HTTP
// batches), receive every audit log line as an [AuditEvent]: the Log line
// in the versioned JSON object of schema [AuditSchema]
// ("tokenvault.audit/v1"), which holds no token data, keys or secrets.
//
// Delivery is at least once. The transaction that writes a line also
// writes, for each configured sink, an entry of that sink's export queue
// in the store, sys/auditq/<sink>/<nanos>/<tenant>/<id> (an empty value; no
// secret in the key). One goroutine per sink reads its queue in time
// order, up to 500 lines at a time, hands them to the sink, and only once
// the sink returned nil removes their entries, in one transaction: the
// queue's head is the sink's durable cursor. A crash or Close in the
// middle of a delivery loses nothing and makes the Vault deliver those
// lines again, with the same event ids, so receivers deduplicate by id. A
// failed delivery is retried after Options.AuditExportBackoff, doubling up
// to a minute. The export runs beside the calls, never in them: a slow or
// down sink delays no call and fails none; its queue grows in the store,
// and [Vault.Stats] (AuditExport: lines pending, age of the oldest; the
// gauges tokenvault_audit_export_pending and
// tokenvault_audit_export_lag_seconds of package prommetrics) shows it.
//
// Each sink has its own queue rather than a shared time-ordered queue with
// a cursor per sink: a cursor that passes a time would skip a line whose
// transaction began earlier but committed later (concurrent PostgreSQL
// transactions, a clock stepping back), and a queue entry cannot be
// skipped. Options.LogRetention never prunes a line still queued for a
// configured sink, nor the tenant's later lines: with a sink down, logs
// are kept until it has them. Lines of a deleted tenant not yet delivered
// are not exported (their entries are dropped as they come up: the
// deletion removes the lines). A sink starts with the lines written once
// it is configured; a sink removed from the configuration leaves its queue
// in the store, delivered if a sink of that name comes back. Every
// instance sharing a store should configure the same sinks: an instance
// queues lines only for its own sinks, and delivers those queues
// (instances with the same sink may deliver a line twice, same id).
//
// # Decisions where the specification is silent
//
//   - Tenants are created by the host ([Vault.CreateTenant] takes no key),
//     or over HTTP by its operator key (POST /operator/tenants); the
//     server bootstraps one on first run. See "Operator operations".
//   - A key may give a management application only permissions it holds
//     itself, and may regenerate a management application's key only if it
//     holds all of that application's permissions: a narrow management key
//     cannot mint or take over a broader one.
//   - An access rule without a transform redacts. Rule priorities within
//     one application must be distinct.
//   - Single reads (get) are logged with operation "read", and so is each
//     token whose data a list, a search, a detokenization or a
//     deduplicated create hands back; other lists, and reading the logs
//     themselves, are not logged.
//   - Lists default to 20 items a page and allow up to 100 (members 50);
//     larger or non-positive values are Invalid, a page past the end is
//     empty. Logs are listed newest first, other lists oldest first.
//   - Every list also walks by cursor: [Pagination].After names the last
//     item of a page (an opaque string; over HTTP pagination.after), and
//     [PageRequest].Start (query start, or start in a search body) asks
//     for the items after it. Positions are the list's stable order:
//     tokens by creation time then id (generated ids before custom ones
//     created in the same instant), logs newest first, the rest by id
//     (official formulas before the tenant's), so a walk sees every item
//     that exists throughout exactly once, whatever is added or removed
//     meanwhile; items added during a walk appear at most once. A cursor
//     page is page_number 1; a cursor with a page above 1, or a string
//     that is not a cursor, is Invalid.
//   - Lists cost what they return. Tokens (and searches without an exact
//     data, metadata, fingerprint or id term), applications, reactors,
//     proxies, members and invitations are walked from the cursor in an
//     ordered index (of all tokens, of a type, or of a container and
//     below; records by id) and the walk stops when the page is full,
//     having examined at most the page's offset, its size and 1,000 more
//     items: where access rules or filters hide most items, a page may be
//     short or empty, with an After that continues. A page number costs
//     its offset, so (page-1)*size above 10,000 is Invalid (use the
//     cursor). Their total_items is a count kept in the commits that add
//     and remove items (the whole list, on a cursor page too), or, for a
//     key limited by access rules or a filter with no count, a lower
//     bound: the items shown up to the end of the page, plus one when
//     After is set (ListTokens says which). Logs (all, a date range, or
//     one entity's) are walked back from the cursor (or the end of a date
//     range) in time order and read only the page's offset and size;
//     having no kept count (lines are appended without one), their
//     total_items is a lower bound, exact on the last page. Logs of an
//     entity type alone walk the log the same way and keep the lines of
//     the type, examining at most the page's offset, its size and 1,000
//     more lines: where the type is rare a page may be short or empty,
//     with an After that continues (a type with at most 1,000 lines is
//     then answered exactly from its index): see ListLogs.
//   - Audit log lines are kept forever unless [Options].LogRetention is
//     set (the server's default is 400 days, above the year PCI DSS asks
//     for); the sweeper then removes older lines with their indexes, 100
//     a transaction, without logging the removal in the tenant's log.
//   - Expired applications, tokens and sessions are refused at the instant of expiry and deleted
//     by the sweeper (every minute by default), which logs the deletion with
//     actor type "system".
//   - Tokenize bodies: an object is a token request when it has a "type"
//     naming a token type (token, card, bank) and a "data" property; any
//     other object or array is walked, and every other non-null value
//     becomes a plain token of type token. At most 10,000 tokens per call,
//     in one transaction; errors name the path of each bad value.
//   - Access: rules are tried in ascending priority and the first that
//     matches and grants the permission decides; direct permissions apply
//     to every container with the implicit transforms (create, update,
//     read, search: mask; use: reveal). A token in several containers must
//     be allowed in each and gets the most restrictive transform. Lists and
//     searches leave out tokens the caller cannot reach.
//   - A token's "mask" property (the evaluated mask) is in every response
//     to a key that may read the token, whatever the transform: a mask is
//     by design what may be shown. Keys that may not read it: see "Keys
//     learn only what they may read".
//   - Create responses never reveal a card or bank account, whatever the
//     rules: they carry the mask. Card numbers are 13 to 19 plain digits.
//   - Fingerprints, search index values and metadata are indexed as keyed
//     HMACs (per tenant), never in plaintext; deduplication matches type,
//     fingerprint, fingerprint expression and containers, among tokens the
//     key may read. Metadata values are matched case-insensitively.
//   - Detokenize uses the caller's token:read transform for each token
//     (reveal, mask, or null for redact), at most 100 distinct tokens per
//     request, and logs each token read.
//   - Custom token ids: 3 to 400 characters, no whitespace and none of
//     # / \ + ? [ ] | & = % < > { } ^. An expired token's id may be reused.
//     See "Token ids are not secret".
//   - Strings given in-process that are not valid UTF-8 (in a
//     TokenRequest, a Tokenize body given as Go values or raw JSON, an
//     UpdateToken patch) are Invalid with their path: encoding them would
//     silently replace their bytes with U+FFFD.
//   - Sessions are created with a public application's key and authorized
//     with a private application's key (any other key: PermissionDenied).
//     No permission names the two operations; instead the authorizer must
//     hold every permission it grants, and the session stays bounded by
//     the authorizer's grants as they were at authorization: a token is
//     reachable only if both allow it, and the more restrictive transform
//     applies. Until authorized a session key is PermissionDenied
//     everywhere. A nonce that cannot be used, for whatever reason
//     (unknown, used, expired, another tenant's), is the same Invalid error
//     on "nonce". expires_at on authorize is at most MaxSessionLifetime (1
//     hour) ahead. Session rules use conditions; a rule with neither
//     conditions nor container applies to every token.
//   - Invitations take bare RFC 5322 addresses. An address that is a
//     member's, or has any invitation (pending or expired: resend that
//     one), is a Conflict. The Mailer is called before the invitation is
//     saved, so a failed e-mail is Unavailable and saves nothing. Resend
//     requires both tenant:invitation:create and tenant:invitation:update,
//     and moves expires_at InvitationLifetime past the later of the old
//     expiry and now. Status EXPIRED is computed on every read and stored
//     by the sweeper. AcceptInvitation (no key; over HTTP
//     POST /tenants/invitations/accept) creates an ADMIN member and deletes
//     the invitation; an unusable link is NotFound. Package smtpmail is a
//     Mailer that sends the e-mail over SMTP (STARTTLS required by
//     default); a Mailer must send the token only to the invitee and never
//     log it or return it in an error.
//   - The OWNER member cannot be deleted (Conflict). A member's access is
//     its membership, which [Vault.Membership] reports to a host program
//     that signs users in; deleting the member revokes it at once.
//   - Reactors: see [Vault.InvokeReactor]. Args are detokenized with
//     token:use, then shaped by the formula's request_parameters (see the
//     rules on prepareArgs in reactor_args.go); missing args are {}.
//     Thrown error classes keep their status (CodeFailed with Status); time
//     and memory limits and crashes are a 500 (see "Tenant code"). Asynchronous runs answer an invocation
//     id and POST a signed [Webhook]; Close cancels runs in progress.
//   - Permission descriptions follow REFERENCE.md: token:read, token:search,
//     token:delete and token:use are private-only; token:create and
//     token:update public or private; everything else management-only.
package tokenvault
