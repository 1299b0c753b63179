package reactors

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// checkName stands in for the root's rule of names.
func checkName(name string, fe unit.FieldErrors) {
	if strings.TrimSpace(name) == "" {
		fe.Add("name", "is required")
	}
}

func TestCheckFormula(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		req    FormulaRequest
		fields []string // the fields refused, none for a request that passes
	}{
		{"minimal", FormulaRequest{Name: "F", Code: "module.exports = async () => 1"}, nil},
		{"its own type restated", FormulaRequest{Name: "F", Type: FormulaPrivate, Code: "x"}, nil},
		{"another type", FormulaRequest{Name: "F", Type: FormulaOfficial, Code: "x"}, []string{"type"}},
		{"no name, no code", FormulaRequest{}, []string{"code", "name"}},
		{"long description", FormulaRequest{Name: "F", Code: "x", Description: strings.Repeat("d", 1001)}, []string{"description"}},
		{"undeclared type", FormulaRequest{Name: "F", Code: "x", Configuration: []ConfigurationDeclaration{{Name: "k", Type: "date"}}},
			[]string{"configuration[0].type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			err := CheckFormula(&req, FormulaPrivate, checkName)
			if len(tc.fields) == 0 {
				if err != nil {
					t.Fatalf("CheckFormula = %v, want nil", err)
				}
				if req.Type != FormulaPrivate || req.Configuration == nil || req.RequestParameters == nil {
					t.Errorf("CheckFormula left %+v, want its type and empty, not nil, declarations", req)
				}
				return
			}
			e, ok := err.(*unit.Error)
			if !ok || e.Kind != unit.Invalid {
				t.Fatalf("CheckFormula = %v, want Invalid", err)
			}
			var got []string
			for f := range e.Fields {
				got = append(got, f)
			}
			sort.Strings(got)
			if !slices.Equal(got, tc.fields) {
				t.Errorf("CheckFormula refused %q, want %q", got, tc.fields)
			}
		})
	}
}

func TestFormulaPosition(t *testing.T) {
	t.Parallel()
	fs := []Formula{{ID: "b", Type: FormulaPrivate}, {ID: "z", Type: FormulaOfficial}, {ID: "a", Type: FormulaPrivate}}
	sort.Slice(fs, func(i, j int) bool { return FormulaPosition(fs[i]) < FormulaPosition(fs[j]) })
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	if want := []string{"z", "a", "b"}; !slices.Equal(ids, want) {
		t.Errorf("formulas ordered %q, want %q (official first, then by id)", ids, want)
	}
}
