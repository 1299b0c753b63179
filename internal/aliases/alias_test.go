package aliases

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestIsExpression(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"order-1":                    false,
		"":                           false,
		"{{ data | alias_card }}":    true,
		"tok_{{ data.code | fpe }}":  true,
		"a { b } c, but no template": false,
	} {
		if got := IsExpression(id); got != want {
			t.Errorf("IsExpression(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestParseIDExpression(t *testing.T) {
	t.Parallel()
	fe := unit.FieldErrors{}
	if tmpl := testRules.ParseIDExpression("order-1", "id", fe); tmpl != nil || len(fe) != 0 {
		t.Errorf("ParseIDExpression(literal) = %v, %v; want nil and no problem", tmpl, fe)
	}
	if tmpl := testRules.ParseIDExpression("{{ data | alias_card }}", "id", fe); tmpl == nil || len(fe) != 0 {
		t.Errorf("ParseIDExpression(alias) = %v, %v; want a template and no problem", tmpl, fe)
	}
	long := "{{ data | alias_preserve_length }}" + strings.Repeat("x", testRules.MaxExpressionBytes)
	if tmpl := testRules.ParseIDExpression(long, "id", fe); tmpl != nil || fieldErr(fe, "id") != "must be at most 4096 bytes" {
		t.Errorf("ParseIDExpression(too long) = %v, %v; want nil and the limit at id", tmpl, fe)
	}
	fe = unit.FieldErrors{}
	if tmpl := testRules.ParseIDExpression("{{ data | ", "tokens[2].id", fe); tmpl != nil || fieldErr(fe, "tokens[2].id") == "" {
		t.Errorf("ParseIDExpression(broken) = %v, %v; want nil and a problem at tokens[2].id", tmpl, fe)
	}
}

func TestPrepare(t *testing.T) {
	t.Parallel()
	vars := expr.Vars(map[string]any{"data": "abcdef"})
	for _, tc := range []struct {
		name, src, want string // want: a part of the problem at id, "" for none
	}{
		{"alias", "{{ data | alias_preserve_length }}", ""},
		{"no alias filter", "{{ data | upcase }}", "must use an alias filter"},
		{"too short an id", "{{ data | slice: 0, 2 | alias_preserve_length }}", "the alias it gives must be 3 to 400 characters"},
		{"nothing to replace", "{{ data | alias_preserve_length: 3, 3 }}", "alias_preserve_length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := unit.FieldErrors{}
			a := testRules.Prepare(mustParse(tc.src), vars, "id", fe)
			got := fieldErr(fe, "id")
			if tc.want == "" {
				if a == nil || got != "" {
					t.Fatalf("Prepare(%q) = %v, %q; want an alias and no problem", tc.src, a, got)
				}
				return
			}
			if a != nil || !strings.Contains(got, tc.want) {
				t.Errorf("Prepare(%q) = %v, %q; want nil and a problem with %q", tc.src, a, got, tc.want)
			}
		})
	}
}

// prepared is an alias of a six-character value, two of its characters
// kept.
func prepared(t *testing.T) *ID {
	t.Helper()
	fe := unit.FieldErrors{}
	a := testRules.Prepare(mustParse("{{ data | alias_preserve_length: 1, 1 }}"), expr.Vars(map[string]any{"data": "abcdef"}), "id", fe)
	if a == nil {
		t.Fatalf("Prepare: %v", fe)
	}
	return a
}

func TestFreeTakesTheFirstFreeAlias(t *testing.T) {
	t.Parallel()
	a := prepared(t)
	var asked []string
	id, err := a.Free(bytes.NewReader(bytes.Repeat([]byte{7, 11, 13, 17, 19}, 400)), func(id string) (bool, error) {
		asked = append(asked, id)
		return len(asked) < 3, nil // the first two are taken
	})
	if err != nil {
		t.Fatalf("Free: %v", err)
	}
	if len(asked) != 3 || id != asked[2] {
		t.Errorf("Free = %q after asking %q, want the third alias asked", id, asked)
	}
	if len(id) != 6 || id[0] != 'a' || id[5] != 'f' {
		t.Errorf("Free = %q, want six characters from a to f", id)
	}
}

func TestFreeWhenEveryDrawIsTaken(t *testing.T) {
	t.Parallel()
	a := prepared(t)
	draws := 0
	last := ""
	id, err := a.Free(&probeReader{}, func(id string) (bool, error) {
		draws++
		last = id
		return true, nil
	})
	if unit.ErrorKind(err) != unit.Conflict || !strings.Contains(err.Error(), "no free alias in 16 draws") {
		t.Fatalf("Free = %v, want Conflict after 16 draws", err)
	}
	if draws != MaxDraws || id != last {
		t.Errorf("Free drew %d aliases and returned %q, want %d draws and the last alias %q", draws, id, MaxDraws, last)
	}
}

func TestFreeErrors(t *testing.T) {
	t.Parallel()
	a := prepared(t)
	broken := errors.New("the disk is on fire")
	if _, err := a.Free(&probeReader{}, func(string) (bool, error) { return false, broken }); !errors.Is(err, broken) {
		t.Errorf("Free with a failing look-up = %v, want its error", err)
	}
	id, err := a.Free(bytes.NewReader(nil), func(string) (bool, error) {
		t.Error("an alias was looked up though Options.Rand failed")
		return false, nil
	})
	if id != "" || unit.ErrorKind(err) != unit.Internal || !errors.Is(err, io.EOF) {
		t.Errorf("Free with an empty Options.Rand = %q, %v; want Internal, of io.EOF", id, err)
	}
}

func TestRandIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	// bytes.Reader is not safe for concurrent use; behind Rand, every
	// byte is read exactly once (go test -race checks the rest).
	const n = 8
	r := NewRand(bytes.NewReader(bytes.Repeat([]byte{1}, n*100)))
	done := make(chan int)
	for range n {
		go func() {
			got := 0
			for range 100 {
				var b [1]byte
				if k, _ := r.Read(b[:]); k == 1 {
					got++
				}
			}
			done <- got
		}()
	}
	total := 0
	for range n {
		total += <-done
	}
	if total != n*100 {
		t.Errorf("read %d bytes through Rand, want %d", total, n*100)
	}
}
