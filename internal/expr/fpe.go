package expr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tokenvault/tokenvault/internal/fpe"
)

// EvalOptions hold what keyed filters need besides the values.
type EvalOptions struct {
	// FPE is the FF1 cipher of the fpe filter. Without it the filter is
	// an error: only a token's id is evaluated with a key.
	FPE *fpe.FF1
}

func init() {
	filters["fpe"] = &filterSpec{params: []argKind{strArg, strArg}, required: 1, valid: fpeValid, keyed: fpeFilter}
}

// fpeValid checks the transformation name and the tweak's length when the
// template is parsed.
func fpeValid(a []arg) error {
	tr, err := fpe.Named(a[0].s)
	if err != nil {
		return errors.New(fpeMessage(err))
	}
	if len(a) > 1 {
		room := fpe.MaxTweak
		if _, card := tr.(fpe.Card); card {
			room = fpe.MaxCardTweak
		}
		if len(a[1].s) > room {
			return fmt.Errorf("the tweak must be at most %d bytes", room)
		}
	}
	return nil
}

// fpeFilter enciphers its input with FF1 under the evaluation's key: the
// same input, transformation and tweak always give the same output.
func fpeFilter(o *EvalOptions, s string, a []arg) (any, error) {
	if o.FPE == nil {
		return nil, errors.New("fpe is only evaluated in a token's id")
	}
	tr, err := fpe.Named(a[0].s)
	if err != nil {
		return nil, errors.New(fpeMessage(err))
	}
	var tweak []byte
	if len(a) > 1 {
		tweak = []byte(a[1].s)
	}
	out, err := tr.Encrypt(o.FPE, s, tweak)
	if err != nil {
		return nil, errors.New("fpe: " + fpeMessage(err))
	}
	return out, nil
}

// fpeMessage drops the package prefix of an fpe error; they never quote
// the value.
func fpeMessage(err error) string { return strings.TrimPrefix(err.Error(), "fpe: ") }

// EndsInFPE reports whether the template has expressions and each one's
// last filter is fpe: whatever it prints of the data is enciphered, so it
// may serve as a token id (ids are not secret).
func (t *Template) EndsInFPE() bool {
	n := 0
	for _, p := range t.parts {
		if p.e == nil {
			continue
		}
		n++
		if len(p.e.filters) == 0 || p.e.filters[len(p.e.filters)-1].name != "fpe" {
			return false
		}
	}
	return n > 0
}
