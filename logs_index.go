package tokenvault

// The entity index of reads is written in batches by the log indexer,
// auditlog.Indexer (internal/auditlog/indexer.go says how and why); the
// Vault builds it in Open and runs it under bg until Close.

// indexLater writes, instead of the index entry of the line at
// log/<suffix> of tenant tid (about entity typ/id, recording operation
// op), its pending entry, and reports whether it did: for reads, on a
// store one process holds (auditlog.Indexer.Later).
func (t *txn) indexLater(tid, typ, id, op, suffix string) (bool, error) {
	return t.v.indexer.Later(t.Tx, tid, typ, id, op, suffix)
}
