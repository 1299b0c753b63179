package tokenvault

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/lease"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Entity types: the values of Log.EntityType.
const (
	EntityApplication      = unit.EntityApplication
	EntityBank             = unit.EntityBank
	EntityCard             = unit.EntityCard
	EntityFPE              = unit.EntityFPE
	EntityProxy            = unit.EntityProxy
	EntityReactor          = unit.EntityReactor
	EntityReactorFormula   = unit.EntityReactorFormula
	EntitySession          = unit.EntitySession
	EntityTenant           = unit.EntityTenant
	EntityTenantMember     = unit.EntityTenantMember
	EntityTenantInvitation = unit.EntityTenantInvitation
	EntityToken            = unit.EntityToken
	EntityTokenIntent      = unit.EntityTokenIntent
	EntityWebhook          = unit.EntityWebhook
)

// Operations: the values of Log.Operation.
const (
	OpCreate = unit.OpCreate
	OpRead   = unit.OpRead
	OpUpdate = unit.OpUpdate
	OpDelete = unit.OpDelete
	OpInvoke = unit.OpInvoke
	// OpDenied is the line of a call refused for its key (denied.go).
	OpDenied = unit.OpDenied
)

// Outcomes: the values of Log.Outcome, and of ListLogsRequest.Outcome.
const (
	OutcomeAllowed = unit.OutcomeAllowed
	OutcomeDenied  = unit.OutcomeDenied
)

// Log is one line of a tenant's audit trail, as ListLogs returns it.
// Messages never hold sensitive values: no token data, no keys.
type Log = auditlog.Log

// EntityType names a kind of entity that logs refer to.
type EntityType = auditlog.EntityType

// ListLogsRequest filters and pages ListLogs. Zero values do not filter.
type ListLogsRequest struct {
	EntityType string
	EntityID   string
	// StartDate keeps logs created at or after it.
	StartDate *time.Time
	// EndDate keeps logs created before it.
	EndDate *time.Time
	// ActorID keeps the lines of one actor (an application, session or
	// user id); Operation those of one operation (Op*); Outcome those of
	// one outcome (OutcomeAllowed, OutcomeDenied). No index serves them:
	// see ListLogs for what a page of them costs.
	ActorID   string
	Operation string
	Outcome   string
	PageRequest
}

// logOperations are the values ListLogsRequest.Operation accepts.
var logOperations = []string{OpCreate, OpRead, OpUpdate, OpDelete, OpInvoke, OpDenied}

// logRead records that p read the data of an entity, and is the one place
// that decides how reads are audited. The policy (docs/internals.md, "Decisions where
// the specification is silent"):
// a single read (get) of any resource is logged with operation "read" as
// p's tenant's line; so is every token whose data a list, search,
// detokenization or deduplicated create hands back, one line per token;
// lists of other resources, and reading the logs themselves, are not.
// Like every line, it lands in the caller's transaction: a read answer is
// never given without its line committed.
func (t *txn) logRead(p *principal, entityType, entityID, msg string) error {
	return t.Log(p.Actor(), p.TenantID, entityType, entityID, OpRead, msg)
}

// ListLogs returns the caller's tenant's logs, newest first. Requires
// log:read. Reading logs is not itself logged.
//
// The whole log, a date range, and one entity's lines (entity_type with
// entity_id) are paged at a cost of the page's offset and its size,
// whatever the log or the entity holds: the log (logPage), or the
// entity's index entries (entityPage), is walked back from the cursor, or
// from the end of the range, through the page and one line more. A page
// number costs its offset, so (page-1)*size above 10,000 is Invalid naming
// page: deeper pages are reached with the cursor (PageRequest.Start,
// pagination.after). Their total_items is a lower bound, since lines are
// appended without a count that could be kept: the lines from the start
// of the list (on a cursor page, from the cursor) to the end of the page,
// plus one when After is set, so total_pages names one page more while
// more follow; it is exact on the last page (After empty). With
// entity_type alone (typePage), the log is walked back the same way and
// each line examined is opened to read its type: a page examines at most
// its offset, its size and 1,000 more lines (paging.ListBudget), so where the
// type is rare a page may be short, even empty, with an After that
// continues the walk (follow After until it is absent); a type with at
// most 1,000 lines is then answered from its index and counted exactly
// (on a cursor page, the lines after the cursor). Its total is otherwise
// the same lower bound.
//
// With actor_id, operation or outcome (with or without the others), the
// log is walked back the same way, each line examined opened and kept if
// it matches every filter (auditlog.FilterLogPage): a page examines at
// most its offset, its size and 1,000 more lines, and may be short, even
// empty, with an After that continues the walk; its total is the same
// lower bound. Denied calls' lines are operation "denied", outcome
// "denied" (denied.go); every other line's outcome is "allowed".
//
// Errors: Unauthenticated, PermissionDenied (no log:read), Invalid (an entity id
// without a type, a type, id or actor id holding "/" or a control
// character, an operation or outcome that is not one, an end
// date not after the start date, a page, size or start that is not one).
func (v *Vault) ListLogs(ctx context.Context, key Credential, req ListLogsRequest) (*Page[Log], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	if req.EntityID != "" && req.EntityType == "" {
		fe.Add("entity_id", "needs entity_type")
	}
	// Control characters too: a zero byte is how the index packs a
	// UUID (lineIndex), and no entity type or id holds one.
	if strings.Contains(req.EntityType, "/") || unit.HasControl(req.EntityType) {
		fe.Add("entity_type", "is not an entity type")
	}
	if strings.Contains(req.EntityID, "/") || unit.HasControl(req.EntityID) {
		fe.Add("entity_id", "is not an identifier")
	}
	if strings.Contains(req.ActorID, "/") || unit.HasControl(req.ActorID) {
		fe.Add("actor_id", "is not an identifier")
	}
	if req.Operation != "" && !slices.Contains(logOperations, req.Operation) {
		fe.Add("operation", "must be one of %s", strings.Join(logOperations, ", "))
	}
	if req.Outcome != "" && req.Outcome != OutcomeAllowed && req.Outcome != OutcomeDenied {
		fe.Add("outcome", "must be allowed or denied")
	}
	if req.StartDate != nil && req.EndDate != nil && !req.StartDate.Before(*req.EndDate) {
		fe.Add("end_date", "must be after start_date")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	// Every line appended so far is listed (appends.go): folded once the
	// key is known to read logs, so that no caller without it can make
	// the store commit.
	if v.barrier.Appends() {
		if err := v.view(ctx, func(t *txn) error {
			_, err := t.authorize(key, PermLogRead)
			return err
		}); err != nil {
			return nil, err
		}
		if err := v.foldAppends(ctx); err != nil {
			return nil, err
		}
	}
	var out *Page[Log]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermLogRead)
		if err != nil {
			return err
		}
		var suffixes []string
		var pag Pagination
		switch {
		case req.ActorID != "" || req.Operation != "" || req.Outcome != "":
			// The lines opened are the page's data (pages_filter.go).
			f := auditlog.Filter{EntityType: req.EntityType, EntityID: req.EntityID,
				ActorID: req.ActorID, Operation: req.Operation, Outcome: req.Outcome}
			var data []Log
			data, pag, err = auditlog.FilterLogPage(t.Tx, p.TenantID, f, req.StartDate, req.EndDate, pg, paging.ListBudget)
			out = &Page[Log]{Pagination: pag, Data: data}
			return err
		case req.EntityType == "":
			suffixes, pag, err = auditlog.LogPage(t.Tx, p.TenantID, req.StartDate, req.EndDate, pg)
		case req.EntityID != "":
			suffixes, pag, err = auditlog.EntityPage(t.Tx, p.TenantID, req.EntityType, req.EntityID, req.StartDate, req.EndDate, pg)
		default:
			// The type's page opens the lines it walks: they are its data.
			var data []Log
			data, pag, err = auditlog.TypeLogPage(t.Tx, p.TenantID, req.EntityType, req.StartDate, req.EndDate, pg, paging.ListBudget, paging.ListBudget)
			out = &Page[Log]{Pagination: pag, Data: data}
			return err
		}
		if err != nil {
			return err
		}
		out = &Page[Log]{Pagination: pag, Data: make([]Log, 0, len(suffixes))}
		for _, s := range suffixes {
			l, ok, err := auditlog.GetLog(t.Tx, p.TenantID, s)
			if err != nil {
				return err
			}
			if ok {
				out.Data = append(out.Data, l)
			}
		}
		return nil
	})
	return out, err
}

// EntityTypes lists the entity types logs refer to. Requires log:read.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without log:read, or
// Internal.
func (v *Vault) EntityTypes(ctx context.Context, key Credential) ([]EntityType, error) {
	err := v.view(ctx, func(t *txn) error {
		_, err := t.authorize(key, PermLogRead)
		return err
	})
	if err != nil {
		return nil, err
	}
	return auditlog.EntityTypes(), nil
}

// VerifyAuditChain verifies tenant tenantID's audit chain as the store
// holds it (auditlog.Verify walks it; docs/audit-chain.md), against the
// checkpoints the store holds and the vault's audit signing keys
// (AuditKeys), and reports what is wrong, each problem at its exact
// sequence number. It links the queued lines first when this instance
// holds the linker lease or can take it (linkNow); lines another instance
// has yet to link are reported apart, as Report.Unlinked (not yet
// covered; not a problem). Report.OK is false when anything is wrong, an
// unsigned tail included (lines after the last checkpoint).
//
// What a report proves: every line linked so far is there, unaltered, in
// the order it was linked, with nothing inserted among them or removed
// (but a prefix retention removed, from a signed checkpoint on); that the
// checkpoints are the vault's signatures of that chain. It does not prove
// an order of commits across instances (the chain's order is the
// linker's: internal/auditlog/chain.go), nor anything of the lines not yet linked.
//
// Besides what auditchain.Verifier finds in any copy, a store walk
// reports: Altered at seq for a line (or, at the chain's last seq, the
// head) whose record does not open or decode, as a value flipped or
// copied from another key does not; Missing at seq for an index entry
// whose line is gone, for a line of the log whose index entry is gone
// (with its LineID), and for lines the head or a checkpoint counts past
// the last line there; Reordered at seq for an index entry naming a line
// whose own seq is another; Inserted, with the line's LineID, at the
// seq after the last chained line before it in the log's (time) order,
// for a line written since the chain began that is neither on the chain
// nor queued to be; BadCheckpoint at seq for a checkpoint record that
// does not open, or that the head names and the store lacks.
//
// It takes no key: it is a host-program (operator) operation, served over
// HTTP under /operator/.
//
// Returns NotFound for an unknown tenant (or one being deleted), and
// Internal (or StorageFull, from linking first) when the store fails: a
// damaged line is a problem in the report, never an error.
func (v *Vault) VerifyAuditChain(ctx context.Context, tenantID string) (*auditchain.Report, error) {
	if !unit.ValidID(tenantID) {
		return nil, unit.NotFoundError("tenant")
	}
	if err := v.linkNow(ctx); err != nil {
		return nil, err
	}
	return auditlog.Verify(ctx, v.work, tenantID, v.AuditKeys)
}

// The linker, what chains the queued audit lines beside the commits that
// wrote them, is auditlog.Linker (internal/auditlog/linker.go says how
// soon a line is linked); Open builds it and Close stops it.

// linkLease is the linker lease of v.
func (v *Vault) linkLease() *lease.Lease { return v.linker.Lease() }

// linkNow folds the store's appends and links every queued line, if this
// instance holds the linker lease or can take it (auditlog.Linker.LinkNow);
// otherwise it returns at once, the lines left to the holder. Returns the
// store's errors.
func (v *Vault) linkNow(ctx context.Context) error { return v.linker.LinkNow(ctx) }

// runChainer runs the linker under v.bg until Close.
func (v *Vault) runChainer() { v.linker.Run(v.bg) }

// AuditChainStats is the audit chain's backlog, for Stats: the lines
// committed and not linked yet, of every tenant, as the linker last
// measured them (every second, on every instance).
type AuditChainStats struct {
	// Unlinked is how many lines are queued and not linked, counted up
	// to 5,000 (a larger backlog reads as 5,000).
	Unlinked int
	// OldestAge is how long ago the oldest of them was written (on the
	// Vault's clock); 0 when there is none.
	OldestAge time.Duration
	// Linking is whether this instance holds the linker lease.
	Linking bool
}

// chainStats is the backlog as last measured.
func (v *Vault) chainStats() AuditChainStats {
	var s AuditChainStats
	var oldest int64
	s.Unlinked, oldest, s.Linking = v.linker.Backlog()
	s.OldestAge = auditlog.BacklogAge(s.Unlinked, oldest, v.now())
	return s
}

// pruneLogs removes the audit log lines older than Options.Retention.Logs
// from every tenant, and returns how many it removed
// (auditlog.Retention.Prune, which says how; the sweeper runs it).
func (v *Vault) pruneLogs(ctx context.Context) (int, error) { return v.retention.Prune(ctx) }

// Appended audit lines.
//
// A read of a token writes only its audit line (and the line's index and
// export queue entries, all new keys: appendRecord in txn.go and
// barrier.Tx.AppendIndex). On a store that can append (store.Appender:
// bbolt's append log), such a call does not take a write transaction: its
// optimistic first run (optimistic.go) read a consistent snapshot, so its
// answer stands as of that snapshot, and its entries are appended. The
// store syncs them before Append returns, so a read is still never
// answered before its line is durable; a commit of the store's file (page
// writes, two syncs, and the CPU of both) is no longer paid for every
// group of reads. This is only done where the auth cache is (a store one
// process holds), and only when no key changed what it authenticates as
// since the call began (the auth generation, as a first run's apply
// checks it); otherwise the call goes through the write transaction as
// before.
//
// Appended entries are in the store's file only once folded (within a
// fraction of a second on bbolt), so whatever reads or removes audit
// lines and their entries folds first: ListLogs, the log indexer, audit
// export, log retention, re-sealing and tenant deletion (foldAppends); a
// backup's snapshot folds in the store. A write that changes what a key
// authenticates as waits, after its commit, for the appends that checked
// the generation before it moved (the hook newTxn registers, txn.go): so once DeleteTenant has
// marked a tenant, no line of it can be appended, and its deletion,
// folding first, leaves none behind.

// foldAppends makes every audit entry appended so far visible to the
// transactions that follow (barrier.FoldAppends). It links nothing: what
// needs the lines linked too calls linkNow (chain_linker.go). On a store
// that does not append there is nothing to do.
func (v *Vault) foldAppends(ctx context.Context) error {
	if !v.barrier.Appends() {
		return nil
	}
	return v.result(v.barrier.FoldAppends(ctx))
}

// AuditSchema names the version of AuditEvent's JSON form for a log
// line. A change that adds, removes or renames a field, or changes its
// meaning, gets a new version: a verifier (auditchain) accepts a line
// only in its canonical form, encoding/json's encoding of AuditEvent byte
// for byte, with no field it does not know.
const AuditSchema = auditchain.LineSchema

// AuditCheckpointSchema names the JSON form of a checkpoint event: an
// AuditEvent that carries a signed checkpoint of a tenant's chain instead
// of a log line.
const AuditCheckpointSchema = auditchain.CheckpointSchema

// AuditEvent is one audit log line, or one signed checkpoint of a
// tenant's audit chain, as it is exported to an AuditSink. It never holds
// token data, keys or secrets. A line's JSON form (schema
// "tokenvault.audit/v1") is:
//
//	{"schema": "tokenvault.audit/v1",   always this value for this version
//	 "id": "...",                       the Log id: duplicates carry the same id
//	 "tenant_id": "...",
//	 "actor_id": "...",                 "" when the system acted (the sweeper)
//	 "actor_type": "...",               application, session, user, operator or system
//	 "entity_type": "...",              one of the Entity* constants
//	 "entity_id": "...",
//	 "operation": "...",                create, read, update, delete, invoke or denied
//	 "message": "...",
//	 "created_at": "2030-01-02T03:04:05.123456789Z",   RFC 3339, UTC, to the nanosecond
//	 "transform": "...",                on a read of a token's data: the transform
//	 "channel": "...",                  applied, the channel and the application it
//	 "application": "...",              went to; absent (empty) on other lines
//	 "seq": 42,                         the line's place in its tenant's chain
//	 "prev_hash": "<64 hex>",           the hash of line seq-1 (zeros for seq 1)
//	 "hash": "<64 hex>"}                the line's own hash
//
// seq, prev_hash and hash are the line's link in its tenant's hash chain
// (package auditchain, docs/audit-chain.md): a line is exported only once
// chained, so every line written since the chain began carries them; a
// line written before carries none. A checkpoint's JSON form (schema
// "tokenvault.audit.checkpoint/v1") is:
//
//	{"schema": "tokenvault.audit.checkpoint/v1",
//	 "id": "checkpoint-<tenant id>-<seq as 16 hex digits>",   "-final" appended for a final one
//	 "tenant_id": "...",
//	 "created_at": "...",               when it was signed
//	 "checkpoint": {"tenant_id": "...", "seq": 42, "hash": "<64 hex>",
//	                "created_at": "...", "key_id": "<16 hex>", "final": true,
//	                "signature": "<base64>"}}
//
// with "checkpoint" the auditchain.Checkpoint, and actor_id, actor_type,
// entity_type, entity_id, operation and message empty. So a copy of
// the export (one sink's, several tenants' events mixed, duplicates and
// all, in any order) verifies without the vault:
// auditchain.VerifyExport, or `tokenvault audit verify -file`.
type AuditEvent = auditchain.Event

// AuditSink receives exported audit events (Options.AuditExport.Sinks). Package
// auditexport has a file, a syslog and an HTTP sink.
//
// Deliver is called by one goroutine per sink, never concurrently with
// itself, with events in the order their lines were written (oldest
// first within a batch; see the package documentation for what order
// holds across batches). It returns nil only once the events are safely
// with the receiver (written and synced, acknowledged): the Vault then
// forgets them. An error makes the Vault offer the same events again
// later, so a receiver may see an event more than once, always with the
// same id. Deliver should return when ctx is done.
type AuditSink = auditlog.Sink

// AuditExportStats is the export lag of one sink, in Stats.
type AuditExportStats = auditlog.ExportStats

// queueForExport writes, in the caller's transaction, an export queue
// entry of every sink for the line just written at log/<suffix>
// (auditlog.Exporter.Queue).
func (t *txn) queueForExport(tid, suffix string) error {
	return t.v.exporter.Queue(t.Tx, tid, suffix)
}

// auditExported reports one delivery to Options.Metrics, if set.
func (v *Vault) auditExported(sink string, n int, err error) {
	if v.metrics != nil {
		v.metrics.AuditExported(sink, n, err)
	}
}

// auditStats is the lag of every sink, for Stats.
func (v *Vault) auditStats() []AuditExportStats { return v.exporter.Stats() }
