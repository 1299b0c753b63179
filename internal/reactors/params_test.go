package reactors

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// noControlForTest refuses a name holding a newline, as the vault's rule
// does, so that the test sees CheckDeclarations defer to it.
func noControlForTest(path, s string, fe unit.FieldErrors) bool {
	if strings.ContainsRune(s, '\n') {
		fe.Add(path, "must not contain control characters")
		return true
	}
	return false
}

func TestCheckDeclarations(t *testing.T) {
	tests := []struct {
		name   string
		conf   []ConfigurationDeclaration
		params []RequestParameter
		fields []string // the fields refused; none: accepted
	}{
		{"none", nil, nil, nil},
		{"siblings and a shared prefix", nil, []RequestParameter{{Name: "card.number", Type: TypeString}, {Name: "card.cvc", Type: TypeString}, {Name: "cardholder", Type: TypeString}}, nil},
		{"one holds the other", nil, []RequestParameter{{Name: "card", Type: TypeString}, {Name: "card.number", Type: TypeString}}, []string{"request_parameters[1].name"}},
		{"one holds the other, the other way", nil, []RequestParameter{{Name: "card.number", Type: TypeString}, {Name: "card", Type: TypeString}}, []string{"request_parameters[1].name"}},
		{"empty segment", nil, []RequestParameter{{Name: "a..b", Type: TypeString}}, []string{"request_parameters[0].name"}},
		{"duplicate parameter", nil, []RequestParameter{{Name: "a", Type: TypeString}, {Name: "a", Type: TypeNumber}}, []string{"request_parameters[1].name"}},
		{"parameter type", nil, []RequestParameter{{Name: "a", Type: "object"}}, []string{"request_parameters[0].type"}},
		{"control character", []ConfigurationDeclaration{{Name: "a\nb", Type: TypeString}}, []RequestParameter{{Name: "c\n", Type: TypeString}}, []string{"configuration[0].name", "request_parameters[0].name"}},
		{"configuration name required", []ConfigurationDeclaration{{Type: TypeBoolean}}, nil, []string{"configuration[0].name"}},
		{"duplicate configuration", []ConfigurationDeclaration{{Name: "k", Type: TypeString}, {Name: "k", Type: TypeString}}, nil, []string{"configuration[1].name"}},
		{"configuration type", []ConfigurationDeclaration{{Name: "k", Type: ""}}, nil, []string{"configuration[0].type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := unit.FieldErrors{}
			CheckDeclarations(tt.conf, tt.params, fe, noControlForTest)
			if len(fe) != len(tt.fields) {
				t.Fatalf("CheckDeclarations(%+v, %+v) refused %v, want %v", tt.conf, tt.params, fe, tt.fields)
			}
			for _, f := range tt.fields {
				if fe[f] == nil {
					t.Errorf("CheckDeclarations(%+v, %+v) refused %v, want %s among them", tt.conf, tt.params, fe, f)
				}
			}
		})
	}
}

func TestCheckConfiguration(t *testing.T) {
	decls := []ConfigurationDeclaration{{Name: "s", Type: TypeString}, {Name: "n", Type: TypeNumber}, {Name: "b", Type: TypeBoolean}}
	fe := unit.FieldErrors{}
	CheckConfiguration(decls, map[string]any{"s": "x", "n": json.Number("1"), "b": false}, fe)
	if len(fe) != 0 {
		t.Fatalf("CheckConfiguration(every name, of its type) = %v, want none", fe)
	}
	fe = unit.FieldErrors{}
	CheckConfiguration(decls, map[string]any{"s": json.Number("1"), "b": "true", "extra": "x"}, fe)
	for _, f := range []string{"configuration.s", "configuration.n", "configuration.b", "configuration.extra"} {
		if fe[f] == nil {
			t.Errorf("CheckConfiguration(wrong types, n missing, extra) = %v, want %s refused", fe, f)
		}
	}
}
