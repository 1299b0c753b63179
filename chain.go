package tokenvault

// The hash chain of the audit trail (docs/audit-chain.md; the format is
// package auditchain's).
//
// Each tenant's lines form one chain: line seq holds seq, the hash of
// line seq-1 and its own hash (auditlog.Link, in its record), and the
// chain's head (auditlog.Head, at tenant/<tid>/chain/head) holds the last
// seq and hash. A sequence index entry per line,
// chain/seq/<seq>/<nanos>/<id>, walks the chain in order by keys alone.
//
// # Beside the commit
//
// A call's commit writes its line once, with a chain queue entry of its
// own, sys/chainq/<nanos>/<tid>/<id> (auditlog.QueueLine), and reads or writes
// nothing else of the chain: no head, no link, no checkpoint. So no two
// commits of a tenant, on one instance or several, write one row for the
// chain's sake. The linker (chain_linker.go) links the queued lines in
// batches, beside the commits: one goroutine per Vault, working only
// while its instance holds the linker lease (internal/lease), each batch one
// transaction that re-reads the lease and goes on only in the epoch it
// holds, so two instances never both extend a chain (no forks). A batch
// takes the queue's oldest entries (by the key: the line's time, then
// tenant and id), and for each writes the line's link record
// (chain_link/<nanos>/<id>, records_chain.go), its sequence index entry,
// and removes the entry; then each moved head, and the checkpoints due
// (checkpoints.go). A line is written once, by its commit: the linker
// never writes it again. Its link is a record of its own, keyed like the
// line, where the verifier, the export and retention look it up from the
// line (auditlog.WithLink); lines linked by older versions hold their link in
// their own record, and read the same.
//
// What the chain orders is the order in which the linker found the lines:
// the queue's key order at each batch, which is the commit order on one
// instance, and across instances the order of their lines' clocks at
// write time, up to lines committed late behind a batch (linked in the
// next). It is not a total order of the commits of several instances;
// what it proves is that no line linked so far was altered, removed,
// reordered or inserted since it was linked.
//
// A crash loses no committed line from the chain: its queue entry was
// committed with it, and the next holder of the lease (this process after
// a restart, or another instance once the lease expires) links it.
//
// Lines written before the chain existed are not chained: the head's
// Since is when the tenant's chain began, and a verifier reports the
// lines older than it apart.
