package aliases

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/fpe"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// MaxFPEValues is how many values one FPEEncode or FPEDecode call takes.
const MaxFPEValues = 100

// FPERequest is the body of the Vault's FPEEncode and FPEDecode (the
// root's FPERequest, whose doc is what callers read): a named
// Transformation or a caller's Alphabet, a Tweak, the KeyVersion that
// encoded (decoding only) and the Values, at most MaxFPEValues.
type FPERequest struct {
	Transformation string   `json:"transformation,omitempty"`
	Alphabet       string   `json:"alphabet,omitempty"`
	Tweak          string   `json:"tweak,omitempty"`
	KeyVersion     int      `json:"key_version,omitempty"`
	Values         []string `json:"values"`
}

// FPEResult is the answer of FPEEncode and FPEDecode (the root's
// FPEResult): the values in the request's order and the version of the
// tenant's FPE key that transformed them.
type FPEResult struct {
	Values     []string `json:"values"`
	KeyVersion int      `json:"key_version"`
}

// FPEName is what the audit line of a decoding calls the request's
// transformation: its name, or "alphabet" for a caller's alphabet.
func FPEName(req FPERequest) string {
	if req.Transformation != "" {
		return req.Transformation
	}
	return "alphabet"
}

// CheckFPE validates everything of req but the values' fit to the
// alphabet, which needs no key but is checked with the transformation
// itself (RunFPE), and returns the transformation. It needs no store, so
// a request is refused before its caller is authorized. Returns Invalid
// with the field.
func CheckFPE(req FPERequest) (fpe.Transformation, error) {
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

// CheckFPEEncode is CheckFPE for an encoding, which refuses a key version:
// encoding always uses the tenant's current FPE key, and the result says
// which. Returns Invalid with the field.
func CheckFPEEncode(req FPERequest) (fpe.Transformation, error) {
	tr, err := CheckFPE(req)
	if err != nil {
		return tr, err
	}
	if req.KeyVersion != 0 {
		return tr, unit.InvalidField("key_version", "is for decoding: encoding always uses the tenant's current FPE key, whose version the result says")
	}
	return tr, nil
}

// RunFPE transforms every value of req, checked by CheckFPE into tr, with
// tenant tid's FPE key at req.KeyVersion (zero: the current one),
// enciphering when enc and deciphering otherwise. The first value that
// does not fit is Invalid at its index, and nothing is returned; a
// version the tenant never had is Invalid at key_version. It reads the
// keyring only: nothing is stored or logged.
func RunFPE(t *unit.Tx, tid string, tr fpe.Transformation, req FPERequest, enc bool) (*FPEResult, error) {
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	version := cmp.Or(req.KeyVersion, ks.FPEVersion())
	f, ok := ks.FPEAt(version)
	if !ok && req.KeyVersion > ks.FPEVersion() {
		// A version newer than this instance's cached keyring may
		// have been made by another instance just now.
		if ks, err = t.TenantKeys(tid, true); err != nil {
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
