// Package unit is the unit of work every feature of the Vault builds on,
// and what they share: it imports no feature (TestPackagesAreLayered in
// the root holds it to that).
//
// What it holds:
//
//   - The unit of work (work.go, optimistic.go, tx.go): a Tx is one store
//     transaction seen by the features (the barrier's, which seals and
//     opens, with the call's time, context and identity generation); Work
//     runs them: View, Update, and UpdateOptimistic, which runs a hot
//     call's function first beside the store's single writer and applies
//     or appends its writes.
//   - Hooks (hooks.go, work.go): a feature acts on a commit by what it
//     registers, never by being called by name. Hooks.BeforeCommit adds to
//     a commit what it writes besides the function's writes (kept counts,
//     the identity generation); Tx.OnFinish and Tx.AfterCommit run once a
//     write transaction ends; Local keeps a feature's state in one
//     transaction; Hooks.Appended hears of appends made without a write
//     transaction.
//   - Records (record.go, codec.go): the interface every stored record
//     implements, and the primitives of their binary encoding (Reader, the
//     Append functions, the table of frequent words), so that a feature's
//     package defines its own records.
//   - The error model (errors.go): Kind and Error, which every feature
//     returns and the root names by aliases; field errors.
//   - Ids and keys (ids.go), the call's identity (call.go: CallInfo and its
//     charges against the limits), and the vocabulary of the audit log
//     (vocabulary.go: entity types, operations, actor and token types).
//
// The layers, top down: the root package (the Vault facade: each typed
// method authorizes and delegates), the feature packages (internal/<feature>:
// each owns its state and records), this package, internal/barrier (the
// only holder of the store), the store.
package unit
