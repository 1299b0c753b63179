// Package auditlog is the audit log feature's own package. It holds, so
// far, the log's stored records: a line (LineRecord, the auditchain.Line
// with its Link), the chain's head (Head) and link records (Link), the
// signed checkpoints (CheckpointRecord) and the signing keys
// (KeyRecord), each in its own encoding and with its format's history in
// its doc (golden fixtures in the root's testdata/records pin every
// version's bytes).
//
// The rest of the feature (writing lines in a unit of work, the linker,
// checkpoints, export, retention, verification) is still in the root
// package and moves here next; this package never imports the root.
package auditlog
