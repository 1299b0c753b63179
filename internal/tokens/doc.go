// Package tokens is the feature of tokens: their stored records, the
// requests that make them, how they are read, presented, detokenized,
// deleted and told of, their fingerprint index and the retention of a
// card's cvc. The root keeps the Vault's token methods (tokenize.go), each
// of which authenticates, authorizes, logs the reads and counts, then
// calls this package; Token and TokenRequest are this package's, aliased
// there.
//
// # What it owns
//
//   - The stored records (record_*.go): a token (Record, with Expired;
//     Kind is its record kind), a token list shape (ShapeRecord), where a
//     store keeps its fingerprint index (FingerprintPlace) and the progress
//     of the one-time scans of every tenant's tokens (LegacyCVCScan,
//     ListBuild), each in its own encoding and with its format's history in
//     its doc (golden fixtures in the root's testdata/records pin every
//     version's bytes).
//   - The API's shapes (request.go, token.go): Request and Token, the
//     request limits (MaxTokensPerRequest, MaxSearchIndexes, ...), the
//     validation of ids, containers and metadata, expressions and masks
//     (EvalExpression, EvalMask, Stringify), and presenting a record to a
//     caller (TokenOf, Value, Present, PresentTransform).
//   - The token types (types.go): Types, each type's default container,
//     fingerprint and mask, and the validation of their data
//     (ValidateData: a card's number, expiry and cvc, a bank account).
//   - A Tokenize body (body.go): DecodeBody, IsRequest, DecodeRequest
//     (RequestOf, the fast way, equal to encoding/json's, FuzzTokenRequestOf),
//     Walk, and the index keys a token writes (Indexes, FingerprintOf,
//     SearchIndex, MetadataIndex: keyed MACs, never plaintext).
//   - Patches (update.go): PatchedRequest and what a patch may read or
//     show (ReadsStoredData, ReadsNoMore, SameCard).
//   - Preparing and creating tokens (prepare.go, create.go): a request
//     validated without the store (Prepared, Service.Prepare,
//     PrepareTree), then created in the transaction (Service.Create,
//     CreateTree): literal, generated, alias and fpe ids, deduplication
//     (only for a key that reads in clear where the token goes), the
//     replacement of an expired token holding the id. Applying a patch
//     (update_apply.go): CheckPatchFields, Service.Patch.
//   - Converting a token intent (convert.go): the token's side of it,
//     checked, deduplicated (refreshing the token found) or created, the
//     intent's side through Intents (intents.Converter).
//   - Importing one token with its id kept (import.go): Service.Import
//     creates it through Create with Prepared.CreatedAt kept, or counts it
//     Skipped when the id holds the same token (SameAsImported); the
//     batches and formats are internal/transfer's.
//   - Audited reads (audited.go): Get, DeleteID, DetokenizeLogged,
//     LogListed and LogRead, the one form of a token read's audit line.
//   - The rules alias and fpe ids obey (alias_rules.go): AliasRules.
//   - Reads and writes (service.go): Service, built in Open, loads (Load,
//     Must), writes (Put, Write) and deletes (Delete) tokens with their
//     index entries; the token lists' bookkeeping is its Lists interface,
//     which the lists feature implements.
//   - Detokenizing (detokenize.go): Service.Detokenize, at most
//     MaxDetokenized distinct tokens a request.
//   - The fingerprint index (fingerprints.go): in memory on a store one
//     process holds (FingerprintMemory, PlaceFingerprints,
//     LoadFingerprints), in the store on a shared one; FingerprintIDs,
//     IndexFingerprint, UnindexFingerprint.
//   - The cvc's retention (cvc.go): CVCDue, a read never shows a cvc past
//     it; RemoveCVC and ScheduleLegacyCVCs are the sweeper's transactions.
//   - The events of tokens (events.go): Emit, EmitRead, EmitReadRecord,
//     EmitDeleted, EmitCVCExpired, through unit.Tx.Emit, with their view
//     (Event, EventView, EventOf) kept under the events' size bound.
//   - The circuit breaker's hooks (reveals.go): every reveal of a get, a
//     detokenization and a list or search page asks Service.Reveals
//     (RevealGate, the root's count of reveals per application) whether
//     it stands, and shows the token masked when it does not; every read
//     of a decoy (Record.Decoy, indexed under DecoyIndex) is told to it
//     (DecoyRead), the listing noting a page's decoys (NoteListed).
//
// # What it does not do
//
// It authenticates and authorizes no call: its functions take a
// *unit.Tx and an access.Principal the caller authenticated and
// authorized for the call's permission (a create still checks
// token:create on the token's own containers and id, an update
// token:update where the token is and goes). It keeps no metrics: it
// tells Service.Count what it did. Aliases and FPE ids, token intents and
// the token lists are other features, reached through small interfaces
// (Aliases, Intents, Lists) that Open fills. It never imports the root.
package tokens
