// Package aliases is the feature of ids derived from a token's data and of
// format-preserving encryption: alias ids (drawn at random in the shape
// of the value they replace), fpe ids (enciphered with FF1 under the
// tenant's token-id key), the display rule that holds both, and masks, to
// what may be shown of the data, and the FPEEncode/FPEDecode
// transformation of values that are never stored, with the rotation of
// the tenant's FPE keys.
//
// # What it owns
//
//   - Alias ids (alias.go): IsExpression tells an id expression from a
//     literal id; Rules.ParseIDExpression parses it; Rules.Prepare checks
//     an alias expression before the transaction, with one draw from a
//     fixed sequence; ID.Free draws from Options.Rand (Rand, safe for
//     concurrent use) until an alias is free in the tenant, at most
//     MaxDraws times, then Conflict.
//   - Fpe ids (fpe_id.go): Rules.FPEIDVars and Rules.DeriveFPEID, which
//     only a key reading tokens in clear where the token is created may
//     use (a taken id would tell a value is tokenized).
//   - The display rule (display.go): Rules.CheckDisplay on a request's
//     mask and id, by the flow analysis of package expr (a card number
//     shows at most its BIN and last four; an id shows in clear only what
//     the mask shows exactly), and Rules.CheckMaskKeepsID on a patch of a
//     token whose id was derived from its data.
//   - Format-preserving encryption of values (fpe.go, fpe_keys.go):
//     FPERequest and FPEResult (the root names them by aliases), CheckFPE
//     and CheckFPEEncode (an encoding names no key version), RunFPE, and
//     RotateFPEKey, which hands the rotated keyring to a KeyCache (the
//     Vault's barrier) only once its transaction has committed.
//
// # What it guarantees
//
// The messages and kinds the API shows (the root's tests compare them);
// no error quotes an id made from the data or a value to transform; a
// rotated keyring is returned to be cached only once committed.
//
// # What it does not do
//
// It does not authorize, store tokens, or log reads: the root's Vault
// methods authenticate and authorize the caller, write the token and its
// audit lines, and call this package. The id rules, how a value prints,
// the data expressions see and how stored JSON decodes are the token
// feature's, which it takes as Rules; it never imports the root or the
// token feature, so the token feature may call it.
package aliases
