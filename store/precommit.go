package store

// PreCommit is implemented by the write transactions of stores that let
// the Update functions sharing one store transaction (a group commit:
// store/bolt, store/postgres) contribute to a write done once for all of
// them, just before that transaction commits. The Vault writes its count
// changes this way: one delta row per count per store transaction rather
// than one per Update, and none read.
//
// What a function adds is kept with that function: when it fails (and
// its writes are undone) its parts are dropped with them; when the whole
// shared transaction is run again (a serialization failure), the parts of
// the failed attempt are dropped and each function adds its own again. A
// store without group commit (store/memory), or an Update that runs
// alone, does the write at the end of its one function. Either way the
// write is part of the transaction: if it fails, the transaction does not
// commit (in a group commit, every function then runs again alone).
type PreCommit interface {
	// AddPreCommit adds part to w's write in this store transaction. It
	// returns an error in a read-only transaction.
	AddPreCommit(w PreCommitWrite, part any) error
}

// PreCommitWrite is a write done once per store transaction with the
// parts that the Update functions sharing it added ([PreCommit]).
type PreCommitWrite interface {
	// WritePreCommit writes with tx (of the transaction about to commit)
	// what parts, in the order they were added, amount to. It is called
	// once per store transaction for every w that was given parts, in the
	// order of their first part, after the last function has returned.
	// It must not call AddPreCommit. An error rolls the transaction back.
	WritePreCommit(tx Tx, parts []any) error
}
