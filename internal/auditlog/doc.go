// Package auditlog is the audit log feature: what a tenant's audit trail
// is in the store, how it is read, chained, signed, verified and pruned.
//
// # What it owns
//
//   - The stored records (record_*.go): a line (LineRecord, the
//     auditchain.Line with its Link), the chain's head (Head) and link
//     records (Link), the signed checkpoints (CheckpointRecord) and the
//     signing keys (KeyRecord), each in its own encoding and with its
//     format's history in its doc (golden fixtures in the root's
//     testdata/records pin every version's bytes).
//   - The line keys and index entries (keys.go: PackSuffix, IndexKey,
//     ParsePending, RangeBounds) and the walks that read pages of lines
//     (pages.go, pages_type.go: Newest, EntityNewest, WalkType,
//     FewOfType; pages_filter.go: FilterLogPage, the filters no index
//     serves: actor, operation, outcome).
//   - The hash chain (chain.go: QueueLine, Chains.Link, WithLink), the
//     linker that chains queued lines beside the commits (linker.go:
//     Linker), checkpoint signing (checkpoints.go: Checkpointer) with the
//     signing keys (signing.go: NewKey, OpenKey, KeyRecords), the
//     verification walk over the store (verify*.go: Verify), log
//     retention (retention.go: Retention), the audit export (export.go,
//     export_pass.go: Exporter, one goroutine per Sink delivering its
//     export queue, with the events it delivers, export_events.go:
//     ExportEvent), and the log indexer that turns reads' pending index
//     entries into index entries (indexer.go: Indexer).
//
// # How the Vault uses it
//
// The stateful parts are types with their own state and a small Config
// (LinkerConfig, CheckpointConfig, RetentionConfig, ExportConfig,
// IndexerConfig) that the root builds
// in Open: they take the unit of work (*unit.Work, *unit.Tx), the
// background lease (internal/lease) and the few things of the Vault they
// need as functions (the export queue, the key wrapper, the sweeper's
// tallies). The root keeps the Vault methods, which authorize and
// delegate (ListLogs, VerifyAuditChain, SignAuditChain, AuditKeys,
// RotateAuditKey), the public types (Log, ListLogsRequest,
// AuditChainStats, and AuditSink and AuditExportStats as aliases of Sink
// and ExportStats), and writing a line in a call's unit of work (t.log,
// t.logRead, t.logTokenRead, which call Exporter.Queue and Indexer.Later).
//
// # Guarantees
//
// A commit writes its line, its index entry and its chain queue entry
// and nothing else of the chain: no two commits of a tenant write one row
// for the chain's sake (DESIGN.md, Writes). The linker links only while
// its instance holds the linker lease, each batch checking it in its own
// transaction, so two instances never fork a chain; a crash loses no
// committed line from the chain. Retention removes a prefix of a chain
// and signs its new start, so what is left verifies.
//
// The export delivers each line at least once, in the order lines were
// written within a batch, and removes a queue entry only once its sink
// has the line; a line queued for the linker leaves only once linked.
//
// It does not authorize anything (its callers have), decide what is
// audited (the root's logRead does), or implement sinks (package
// auditexport has them). It never imports the root.
package auditlog
