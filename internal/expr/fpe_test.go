package expr

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/fpe"
)

func TestFPEFilter(t *testing.T) {
	key, _ := fpe.NewFF1(make([]byte, 32))
	other, _ := fpe.NewFF1(append(make([]byte, 31), 1))
	vars := Vars(map[string]any{"data": map[string]any{"number": "4242 4242 4242 4242", "ssn": "123-45-6789"}})
	eval := func(src string, f *fpe.FF1) (any, error) {
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%s): %v", src, err)
		}
		return tmpl.EvalWith(vars, EvalOptions{FPE: f})
	}
	a, err := eval(`{{ data.number | fpe: "card_bin_last4" }}`, key)
	if err != nil {
		t.Fatal(err)
	}
	s := a.(string)
	if len(s) != 19 || !strings.HasPrefix(s, "4242 42") || !strings.HasSuffix(s, " 4242") || s == "4242 4242 4242 4242" {
		t.Errorf("card id %q", s)
	}
	if b, _ := eval(`{{ data.number | fpe: "card_bin_last4" }}`, key); b != a {
		t.Errorf("not deterministic: %v then %v", a, b)
	}
	if b, _ := eval(`{{ data.number | fpe: "card_bin_last4", "x" }}`, key); b == a {
		t.Errorf("the tweak changes nothing")
	}
	if b, _ := eval(`{{ data.number | fpe: "card_bin_last4" }}`, other); b == a {
		t.Errorf("the key changes nothing")
	}
	if v, err := eval(`ssn-{{ data.ssn | fpe: "digits" }}`, key); err != nil || len(v.(string)) != 15 || v.(string)[7] != '-' {
		t.Errorf("ssn id %v, %v", v, err)
	}
	if _, err := eval(`{{ data.number | fpe: "digits" }}`, nil); err == nil || !strings.Contains(err.Error(), "token's id") {
		t.Errorf("without a key: %v", err)
	}
	if _, err := eval(`{{ data.ssn | fpe: "card" }}`, key); err == nil || strings.Contains(err.Error(), "123") {
		t.Errorf("an ssn as a card: %v", err)
	}
	for _, src := range []string{`{{ x | fpe }}`, `{{ x | fpe: "hex" }}`, `{{ x | fpe: 10 }}`, `{{ x | fpe: "card", "` + strings.Repeat("t", 250) + `" }}`} {
		if _, err := Parse(src); err == nil {
			t.Errorf("Parse(%.40s) accepted", src)
		}
	}
}

func TestEndsInFPE(t *testing.T) {
	for src, want := range map[string]bool{
		`{{ data.number | fpe: "card" }}`:                             true,
		`c-{{ data.a | fpe: "digits" }}-{{ data.b | fpe: "digits" }}`: true,
		`{{ data.number | fpe: "card" | last4 }}`:                     false,
		`{{ data.number }}`:                                           false,
		`c-{{ data.a | fpe: "digits" }}-{{ data.b }}`:                 false,
		`plain`: false,
	} {
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := tmpl.EndsInFPE(); got != want {
			t.Errorf("EndsInFPE(%s) = %v, want %v", src, got, want)
		}
	}
}

func TestFPETweaked(t *testing.T) {
	key, _ := fpe.NewFF1(make([]byte, 32))
	vars := func(region any) Resolver {
		return Vars(map[string]any{"data": "4242424242424242", "metadata": map[string]any{"region": region}})
	}
	eval := func(src string, r Resolver) (any, error) {
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%s): %v", src, err)
		}
		return tmpl.EvalWith(r, EvalOptions{FPE: key})
	}
	const src = `{{ data | fpe_tweaked: "digits", "metadata.region" }}`
	eu, err := eval(src, vars("eu"))
	if err != nil {
		t.Fatal(err)
	}
	us, _ := eval(src, vars("us"))
	lit, _ := eval(`{{ data | fpe: "digits", "eu" }}`, vars("eu"))
	if eu == us || eu != lit {
		t.Errorf("tweaked eu %v, us %v, literal eu %v", eu, us, lit)
	}
	if _, err := eval(src, vars(nil)); err == nil || !strings.Contains(err.Error(), "names nothing") {
		t.Errorf("missing tweak: %v", err)
	}
	if _, err := eval(src, vars(strings.Repeat("x", 300))); err == nil {
		t.Error("a 300-byte tweak was taken")
	}
	for _, bad := range []string{`{{ x | fpe_tweaked: "digits" }}`, `{{ x | fpe_tweaked: "digits", "" }}`, `{{ x | fpe_tweaked: "nope", "data.a" }}`} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
	if tmpl, _ := Parse(src); !tmpl.EndsInFPE() {
		t.Error("EndsInFPE(fpe_tweaked) = false")
	}
}
