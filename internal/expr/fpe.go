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
	filters["fpe"] = &filterSpec{params: []argKind{strArg, strArg}, required: 1, valid: fpeValid, keyed: fpeFilter, flow: textRule(fpeFlow)}
	filters["fpe_tweaked"] = &filterSpec{params: []argKind{strArg, strArg}, required: 2, valid: fpeTweakedValid, keyed: fpeTweaked, flow: textRule(fpeFlow)}
}

// fpeTweakedValid checks the name, and that the tweak's path is one.
func fpeTweakedValid(a []arg) error {
	if err := fpeValid(a[:1]); err != nil {
		return err
	}
	if a[1].s == "" || strings.Trim(a[1].s, ".") != a[1].s {
		return errors.New("the tweak must be a variable path such as data.country")
	}
	return nil
}

// fpeTweaked is fpe with the tweak read from a variable (data.country,
// metadata.region): the same value gets another id under another tweak
// value. A path naming nothing is an error, not an empty tweak, so a
// missing field never silently changes which permutation is used.
func fpeTweaked(ev *evaluator, s string, a []arg) (any, error) {
	if ev.resolve == nil {
		return nil, errors.New("fpe_tweaked has no variables to read its tweak from")
	}
	v, err := ev.resolve(a[1].s)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("fpe_tweaked: %s names nothing", a[1].s)
	}
	tw, err := ev.render(v)
	if err != nil {
		return nil, err
	}
	return fpeFilter(ev, s, []arg{a[0], {kind: strArg, s: tw}})
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
func fpeFilter(ev *evaluator, s string, a []arg) (any, error) {
	o := &ev.opts
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
// last filter is fpe or fpe_tweaked: whatever it prints of the data is enciphered, so it
// may serve as a token id (ids are not secret).
func (t *Template) EndsInFPE() bool {
	n := 0
	for _, p := range t.parts {
		if p.e == nil {
			continue
		}
		n++
		if len(p.e.filters) == 0 || !strings.HasPrefix(p.e.filters[len(p.e.filters)-1].name, "fpe") {
			return false
		}
	}
	return n > 0
}
