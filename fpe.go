package tokenvault

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/fpe"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// MaxFPEValues is how many values one FPEEncode or FPEDecode call takes.
const MaxFPEValues = 100

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
type FPERequest struct {
	Transformation string   `json:"transformation,omitempty"`
	Alphabet       string   `json:"alphabet,omitempty"`
	Tweak          string   `json:"tweak,omitempty"`
	KeyVersion     int      `json:"key_version,omitempty"`
	Values         []string `json:"values"`
}

// FPEResult holds the transformed values, in the request's order, and
// the version of the tenant's FPE key that transformed them.
type FPEResult struct {
	Values     []string `json:"values"`
	KeyVersion int      `json:"key_version"`
}

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
	tr, err := req.check()
	if err != nil {
		return nil, err
	}
	if req.KeyVersion != 0 {
		return nil, unit.InvalidField("key_version", "is for decoding: encoding always uses the tenant's current FPE key, whose version the result says")
	}
	var out *FPEResult
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermFPEEncode)
		if err != nil {
			return err
		}
		out, err = t.fpeRun(p, tr, req, true)
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
	tr, err := req.check()
	if err != nil {
		return nil, err
	}
	var out *FPEResult
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermFPEDecode)
		if err != nil {
			return err
		}
		if out, err = t.fpeRun(p, tr, req, false); err != nil {
			return err
		}
		return t.logRead(p, EntityFPE, req.name(), fmt.Sprintf("FPE decoded (%d values, key version %d)", len(req.Values), out.KeyVersion))
	})
	return out, err
}

// name is what the audit line calls the request's transformation.
func (req FPERequest) name() string {
	if req.Transformation != "" {
		return req.Transformation
	}
	return "alphabet"
}

// check validates everything but the values' fit to the alphabet, which
// needs no key but is checked with the transformation itself.
func (req FPERequest) check() (fpe.Transformation, error) {
	var tr fpe.Transformation
	var err error
	switch {
	case req.Transformation != "" && req.Alphabet != "":
		return nil, unit.InvalidField("alphabet", "give a transformation or an alphabet, not both")
	case req.Transformation != "":
		if tr, err = fpe.Named(req.Transformation); err != nil {
			return nil, unit.InvalidField("transformation", "%s", fpeMessage(err))
		}
	case req.Alphabet != "":
		if tr, err = fpe.Custom(req.Alphabet); err != nil {
			return nil, unit.InvalidField("alphabet", "%s", fpeMessage(err))
		}
	default:
		return nil, unit.InvalidField("transformation", "is required (or an alphabet)")
	}
	if req.KeyVersion < 0 {
		return nil, unit.InvalidField("key_version", "must be a key version (1 or more), or absent for the current one")
	}
	if !utf8.ValidString(req.Tweak) {
		return nil, unit.InvalidField("tweak", "is not valid UTF-8")
	}
	if len(req.Tweak) > fpe.MaxTweak {
		return nil, unit.InvalidField("tweak", "must be at most %d bytes", fpe.MaxTweak)
	}
	switch n := len(req.Values); {
	case n == 0:
		return nil, unit.InvalidField("values", "must hold at least one value")
	case n > MaxFPEValues:
		return nil, unit.InvalidField("values", "must hold at most %d values", MaxFPEValues)
	}
	return tr, nil
}

// fpeRun transforms every value of req with p's tenant's FPE key at
// req.KeyVersion (zero: the current one); the first value that does not
// fit is Invalid at its index, and nothing is returned.
func (t *txn) fpeRun(p *principal, tr fpe.Transformation, req FPERequest, enc bool) (*FPEResult, error) {
	ks, err := t.TenantKeys(p.TenantID, false)
	if err != nil {
		return nil, err
	}
	version := cmp.Or(req.KeyVersion, ks.FPEVersion())
	f, ok := ks.FPEAt(version)
	if !ok && req.KeyVersion > ks.FPEVersion() {
		// A version newer than this instance's cached keyring may
		// have been made by another instance just now.
		if ks, err = t.TenantKeys(p.TenantID, true); err != nil {
			return nil, err
		}
		f, ok = ks.FPEAt(version)
	}
	if !ok {
		return nil, unit.InvalidField("key_version", "the tenant has FPE key versions 1 to %d", ks.FPEVersion())
	}
	tweak := []byte(req.Tweak)
	out := &FPEResult{Values: make([]string, len(req.Values)), KeyVersion: version}
	for i, val := range req.Values {
		var r string
		if enc {
			r, err = tr.Encrypt(f, val, tweak)
		} else {
			r, err = tr.Decrypt(f, val, tweak)
		}
		if err != nil {
			return nil, unit.InvalidField(fmt.Sprintf("values[%d]", i), "%s", fpeMessage(err))
		}
		out.Values[i] = r
	}
	return out, nil
}

// fpeMessage is an fpe error's message without its "fpe: " prefix. The
// package's errors never quote the value.
func fpeMessage(err error) string { return strings.TrimPrefix(err.Error(), "fpe: ") }
