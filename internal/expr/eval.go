package expr

import (
	"errors"
	"io"
	"strings"
)

// Resolver returns the value of a root operand: the raw trimmed text
// before the first top-level "|" of an expression. Values are what
// encoding/json decodes into an any (map[string]any, []any, string, bool,
// nil, float64 or json.Number). A missing value should be nil, not an
// error; an error is for a root the resolver cannot interpret.
type Resolver func(root string) (any, error)

// Eval evaluates the template. A template that is exactly one expression,
// with no text around it, gives that expression's value with its JSON
// type, so a mask can be an object or a number. Any other template gives a
// string: its text with each value printed in place (strings as they are,
// nil as "", numbers in shortest decimal form, booleans as true or false,
// objects and arrays as JSON).
//
// Values from the Resolver are not copied and may be returned as they
// are; filters never modify them.
//
// Errors are *Error whose Pos is the "{{" of the failing expression: the
// resolver failed, a filter refused its input (a json path selecting
// nothing, a card filter given something that is not a card), or the
// template did more than 16 MiB of text work.
//
// The alias filters fail under Eval: they need [Template.EvalRand].
func (t *Template) Eval(resolve Resolver) (any, error) {
	return t.EvalWith(resolve, EvalOptions{})
}

// EvalWith is Eval with what keyed filters (fpe) need.
func (t *Template) EvalWith(resolve Resolver, o EvalOptions) (any, error) {
	return t.eval(&evaluator{resolve: resolve, work: maxWork, opts: o})
}

// EvalRand is Eval with randomness for the alias filters (alias_card,
// alias_preserve_format, alias_preserve_length), which make token ids.
// rand must give uniform random bytes (crypto/rand.Reader in production;
// tests inject a fixed sequence to force a collision). Besides Eval's
// errors, an alias filter refuses input it cannot alias (a card number too
// short for what it reveals, a value with nothing left to make random) and
// fails when rand does.
func (t *Template) EvalRand(resolve Resolver, rand io.Reader) (any, error) {
	return t.eval(&evaluator{resolve: resolve, work: maxWork, rand: newRandSource(rand)})
}

// Random reports whether the template uses an alias filter, and so gives a
// new value each time EvalRand evaluates it.
func (t *Template) Random() bool {
	for _, p := range t.parts {
		if p.e == nil {
			continue
		}
		for _, f := range p.e.filters {
			if f.spec.random != nil {
				return true
			}
		}
	}
	return false
}

func (t *Template) eval(ev *evaluator) (any, error) {
	if e := t.single(); e != nil {
		return ev.eval(e)
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.e == nil {
			b.WriteString(p.text)
			continue
		}
		v, err := ev.eval(p.e)
		if err != nil {
			return nil, err
		}
		s, err := ev.render(v)
		if err != nil {
			return nil, &Error{Pos: p.e.pos, Msg: err.Error()}
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// evaluator is the state of one Eval: the resolver and the work left.
type evaluator struct {
	resolve Resolver
	work    int
	rand    *randSource // nil but under EvalRand
	opts    EvalOptions
}

var errTooMuchWork = errors.New("template needs more than 16 MiB of text work")

// spend charges n bytes of work.
func (ev *evaluator) spend(n int) error {
	if ev.work -= n; ev.work < 0 {
		return errTooMuchWork
	}
	return nil
}

// render renders a value as text and charges for the text.
func (ev *evaluator) render(v any) (string, error) {
	s, err := render(v)
	if err != nil {
		return "", err
	}
	return s, ev.spend(len(s))
}

// eval evaluates one expression; every error points at its "{{".
func (ev *evaluator) eval(e *expression) (any, error) {
	v, err := ev.root(e)
	if err == nil {
		for _, f := range e.filters {
			if v, err = ev.apply(f, v); err != nil {
				break
			}
		}
	}
	if err != nil {
		var xe *Error
		if errors.As(err, &xe) {
			return nil, &Error{Pos: e.pos, Msg: xe.Msg}
		}
		return nil, &Error{Pos: e.pos, Msg: err.Error()}
	}
	return v, nil
}

func (ev *evaluator) root(e *expression) (any, error) {
	if e.literal != nil {
		return *e.literal, nil
	}
	if ev.resolve == nil {
		return nil, errors.New("no resolver for " + e.root)
	}
	return ev.resolve(e.root)
}

// apply runs one filter, charging for the text it reads and writes: every
// filter is linear in those, so this bounds time as well as memory.
func (ev *evaluator) apply(f filter, v any) (any, error) {
	var out any
	var err error
	switch {
	case f.spec.random != nil:
		if ev.rand == nil {
			return nil, errNoRand
		}
		s, rerr := ev.render(v)
		if rerr != nil {
			return nil, rerr
		}
		out, err = f.spec.random(s, f.args, ev.rand)
	case f.spec.text != nil || f.spec.keyed != nil:
		s, rerr := ev.render(v)
		if rerr != nil {
			return nil, rerr
		}
		if f.spec.keyed != nil {
			out, err = f.spec.keyed(ev, s, f.args)
		} else {
			out, err = f.spec.text(s, f.args)
		}
	default:
		if s, ok := v.(string); ok {
			if err := ev.spend(len(s)); err != nil {
				return nil, err
			}
		}
		out, err = f.spec.value(v, f.args)
	}
	if err != nil {
		return nil, err
	}
	switch x := out.(type) {
	case string:
		err = ev.spend(len(x))
	case []any:
		err = ev.spend(len(x))
	}
	return out, err
}
