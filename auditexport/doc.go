// Package auditexport holds the audit sinks of a Vault
// (tokenvault.Options.AuditExport.Sinks): File writes JSON lines to a file with
// size-based rotation, Syslog sends RFC 5424 messages over UDP or TCP, and
// HTTP POSTs signed batches of JSON. Each implements tokenvault.AuditSink;
// the Vault side (the queue in the store, the delivery goroutines, the
// lag) is in package tokenvault.
//
//	f, err := auditexport.NewFile("/var/log/tokenvault/audit.jsonl", auditexport.FileOptions{})
//	...
//	v, err := tokenvault.Open(ctx, tokenvault.Options{..., AuditSinks: []tokenvault.AuditSink{f}})
//	...
//	defer f.Close() // after v.Close
//
// # Events
//
// Every sink carries tokenvault.AuditEvent values, the JSON object of
// schema "tokenvault.audit/v1":
//
//	{"schema":"tokenvault.audit/v1","id":"0193...","tenant_id":"...","actor_id":"...",
//	 "actor_type":"application","entity_type":"token","entity_id":"...",
//	 "operation":"create","message":"Token created","created_at":"2030-01-02T03:04:05.123456789Z"}
//
// An event is an audit log line (tokenvault.Log) and nothing more: no token
// data, no keys, no secrets. A line also carries its link in its tenant's
// hash chain, "seq", "prev_hash" and "hash", and, on a read of a token's
// data, "transform", "channel" and "application"; the chain's signed
// checkpoints are events too, of schema "tokenvault.audit.checkpoint/v1":
//
//	{"schema":"tokenvault.audit.checkpoint/v1","id":"checkpoint-<tenant id>-<seq as 16 hex>",
//	 "tenant_id":"...","created_at":"...","checkpoint":{"tenant_id":"...","seq":42,
//	 "hash":"<64 hex>","created_at":"...","key_id":"<16 hex>","signature":"<base64>"}}
//
// (tokenvault.AuditEvent has the whole form). So a sink's copy verifies
// without the vault: auditchain.VerifyExport reads a file sink's output
// (rotated files concatenated, in any order), or `tokenvault audit verify
// -file`; docs/audit-chain.md is the format for other verifiers. Every
// sink carries every field.
//
// # Delivery
//
// At least once: the Vault queues every line for every sink in the
// transaction that writes it, and removes a line from a sink's queue only
// after Deliver returned nil for it. A crash, a Close in the middle of a
// delivery or a failing receiver makes the Vault deliver the line again,
// always with the same id: receivers deduplicate by id. Within a delivery
// events are in the order of their lines' timestamps; across deliveries,
// a line committed late (a long transaction) may follow a newer one.
package auditexport
