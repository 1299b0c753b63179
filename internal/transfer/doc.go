// Package transfer is the feature of bulk import: the exchange format (one
// token a line of NDJSON, the fields of the API's token object), the
// other formats read into it (CSV, the best-known hosted service's
// export), the rule that keeps data out of imported ids, and the batch
// that commits whole. The root's ImportTokens authenticates, authorizes
// and calls Prepare then Commit in one transaction; the CLI's import
// command reads files with Reader.
//
// # A batch
//
// At most MaxBatch lines. Each line is validated as a token request is
// (internal/tokens, Prepare), its id held to IDProblem, then created
// through tokens.Service.Import, the path of every create: what an import
// creates differs from a tokenized token only by its kept id and
// created_at. A line that fails is a Reject (its line number and reason,
// never its data) and the rest carries on; the valid lines commit in one
// transaction, all or none.
package transfer
