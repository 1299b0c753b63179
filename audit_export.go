package tokenvault

import (
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
)

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
//	 "operation": "...",                create, read, update, delete or invoke
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
