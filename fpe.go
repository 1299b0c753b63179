package tokenvault

import (
	"context"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/aliases"
)

// MaxFPEValues is how many values one FPEEncode or FPEDecode call takes.
const MaxFPEValues = aliases.MaxFPEValues

// FPERequest asks FPEEncode or FPEDecode to transform values with the
// tenant's FF1 key (NIST SP 800-38G, AES-256). Exactly one of
// Transformation and Alphabet is set.
//
// Transformation is "digits" (0-9), "alphanumeric" (0-9A-Za-z), "base36"
// (0-9a-z), or "card" followed by any of "_bin", "_last4", "_luhn" in
// that order: a card number (12 to 19 digits passing the Luhn check)
// keeping its first 6 and/or last 4 digits, whose token fails the Luhn
// check unless "_luhn" asks for one that passes. Alphabet is a caller's
// alphabet (2 to 65536 distinct characters, no space or dash). Spaces and
// dashes in a value stay where they are; any other character outside the
// alphabet is Invalid.
//
// Tweak (at most 256 bytes; 244 for cards) varies the transformation: the
// same value with another tweak gets an unrelated result, and decoding
// needs the tweak that encoded.
//
// KeyVersion, for FPEDecode only, is the version of the tenant's FPE key
// that encoded the values (FPEResult.KeyVersion of the encoding); zero
// means the current one. FF1 output cannot say which key made it, and
// any key deciphers any value to something: a value encoded before
// RotateFPEKey decodes only with the version it was encoded under. Keep
// the version beside what you store. FPEEncode always uses the current
// version and refuses another.
type FPERequest = aliases.FPERequest

// FPEResult holds the transformed values, in the request's order, and
// the version of the tenant's FPE key that transformed them.
type FPEResult = aliases.FPEResult

// FPEEncode enciphers values that are never stored, with the tenant's FF1
// key: the same value, transformation and tweak always give the same
// result in a tenant (and different ones in different tenants), of the
// value's length and alphabet. Nothing is stored and nothing is logged:
// encoding reveals nothing the caller did not send. Requires fpe:encode.
//
// The key does not rotate with RotateDataKey, only with RotateFPEKey, and
// the result says which version encoded (FPEResult.KeyVersion): what was
// encoded under an older version still decodes with that version.
//
// Returns Invalid (with the field: transformation, alphabet, tweak, or
// values[i] for a value too short for its alphabet, too long, or with a
// character outside it, never quoting the value; key_version when one is
// given, since encoding uses the current version), Unauthenticated for a
// key that is missing, unknown or expired, RateLimited over a rate limit,
// PermissionDenied without fpe:encode, or Internal.
func (v *Vault) FPEEncode(ctx context.Context, key Credential, req FPERequest) (*FPEResult, error) {
	tr, err := aliases.CheckFPEEncode(req)
	if err != nil {
		return nil, err
	}
	var out *FPEResult
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermFPEEncode)
		if err != nil {
			return err
		}
		out, err = aliases.RunFPE(t.Tx, p.TenantID, tr, req, true)
		return err
	})
	return out, err
}

// FPEDecode deciphers what FPEEncode (or the fpe filter) made, with the
// same transformation and tweak. Decoding reveals data, so it has its own
// permission (fpe:decode, held by private applications only) and, like a
// read, one audit line per call (entity type "fpe", the transformation as
// entity id, operation "read"; never the values). A value that no encoding
// could have made (for the default card transformation, one that passes
// the Luhn check) is Invalid; any other value of the right alphabet and
// length decodes, as FF1 has no integrity check.
//
// KeyVersion picks the version of the tenant's FPE key that encoded the
// values (zero: the current one); the audit line names it.
//
// Returns Invalid as FPEEncode does (key_version for a version the tenant
// never had, or a negative one), Unauthenticated, RateLimited,
// PermissionDenied without fpe:decode, StorageFull, or Internal.
func (v *Vault) FPEDecode(ctx context.Context, key Credential, req FPERequest) (*FPEResult, error) {
	tr, err := aliases.CheckFPE(req)
	if err != nil {
		return nil, err
	}
	var out *FPEResult
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermFPEDecode)
		if err != nil {
			return err
		}
		if out, err = aliases.RunFPE(t.Tx, p.TenantID, tr, req, false); err != nil {
			return err
		}
		return t.logRead(p, EntityFPE, aliases.FPEName(req), fmt.Sprintf("FPE decoded (%d values, key version %d)", len(req.Values), out.KeyVersion))
	})
	return out, err
}

// RotateFPEKey gives the caller's tenant a new version of its FPE keys,
// under a fresh random secret, and returns its number: FPEEncode and ids
// derived with the fpe filter use it from now on, while every older
// version stays in the keyring, so that FPEDecode with a request's
// KeyVersion still decodes what an older version encoded, and tokens
// whose ids an older version derived keep their ids and read as before.
// Ids are derived from the data, so after a rotation the same data gets
// another id: a token created before it is not a duplicate of one created
// after. The rotation is a line of the tenant's audit log (entity type
// tenant, operation update), and so of its audit chain. Requires
// tenant:update.
//
// Tokens do not record the version that derived their id: an id is looked
// up, never decoded, so it needs none, and the audit line dates the
// change. Other instances sharing the store take the new version within
// barrier.KeyringTTL (5 s), as after RotateDataKey.
//
// Rotate when an FPE key may have been exposed, or on the schedule your
// key management policy sets: a rotation cannot re-encode values held
// outside the vault, so the older versions are kept for good.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without tenant:update,
// StorageFull, or Internal.
func (v *Vault) RotateFPEKey(ctx context.Context, key Credential) (version int, err error) {
	v.wrapMu.RLock()
	defer v.wrapMu.RUnlock()
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTenantUpdate)
		if err != nil {
			return err
		}
		// Only a committed keyring is cached: ids and encodings made
		// under a rolled back version could never be decoded or
		// derived again.
		version, err = aliases.RotateFPEKey(t.Tx, p.Actor(), p.TenantID, v.barrier)
		return err
	})
	if err != nil {
		return 0, err
	}
	return version, nil
}
