package reactors

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// ValidValueType reports whether t is a value type a configuration
// declaration or a request parameter may have.
func ValidValueType(t string) bool { return t == TypeString || t == TypeNumber || t == TypeBoolean }

// CheckDeclarations checks a formula's configuration declarations and
// request parameters, adding each problem to fe under its path
// (configuration[i].name, request_parameters[i].type, ...): names are
// required and unique, request parameters are names or dot-separated
// names of which none holds another ("a" and "a.b" cannot both be: a is
// a value or an object), and every type is a ValidValueType.
//
// noControl applies the vault's rule on the characters of a name: it adds
// its error at path to fe and reports true when s breaks it. It is the
// caller's so that every name of the API is refused in the same words.
func CheckDeclarations(conf []ConfigurationDeclaration, params []RequestParameter, fe unit.FieldErrors, noControl func(path, s string, fe unit.FieldErrors) bool) {
	seen := map[string]bool{}
	for i, c := range conf {
		path := fmt.Sprintf("configuration[%d]", i)
		switch {
		case c.Name == "":
			fe.Add(path+".name", "is required")
		case seen[c.Name]:
			fe.Add(path+".name", "duplicate name %q", c.Name)
		default:
			noControl(path+".name", c.Name, fe)
		}
		seen[c.Name] = true
		if !ValidValueType(c.Type) {
			fe.Add(path+".type", "must be string, number or boolean")
		}
	}
	seen = map[string]bool{}
	for i, p := range params {
		path := fmt.Sprintf("request_parameters[%d]", i)
		switch {
		case p.Name == "" || slices.Contains(strings.Split(p.Name, "."), ""):
			fe.Add(path+".name", "must be a name or dot-separated names")
		case seen[p.Name]:
			fe.Add(path+".name", "duplicate name %q", p.Name)
		case noControl(path+".name", p.Name, fe):
		default:
			// "a" and "a.b" cannot both be: a is a value or an object.
			for _, q := range params[:i] {
				if strings.HasPrefix(p.Name, q.Name+".") || strings.HasPrefix(q.Name, p.Name+".") {
					fe.Add(path+".name", "%q and %q cannot both be parameters: one holds the other", q.Name, p.Name)
					break
				}
			}
		}
		seen[p.Name] = true
		if !ValidValueType(p.Type) {
			fe.Add(path+".type", "must be string, number or boolean")
		}
	}
}

// CheckConfiguration checks a reactor's configuration against its
// formula's declarations: every declared name, of its type, and no other.
// Each problem is added to fe under configuration.<name>.
func CheckConfiguration(decls []ConfigurationDeclaration, conf map[string]any, fe unit.FieldErrors) {
	declared := map[string]string{}
	for _, d := range decls {
		declared[d.Name] = d.Type
		v, ok := conf[d.Name]
		switch {
		case !ok:
			fe.Add("configuration."+d.Name, "is required by the formula")
		case !HasValueType(v, d.Type):
			fe.Add("configuration."+d.Name, "must be a %s", d.Type)
		}
	}
	for name := range conf {
		if _, ok := declared[name]; !ok {
			fe.Add("configuration."+name, "is not declared by the formula")
		}
	}
}

// HasValueType reports whether v, a decoded JSON value, is of the value
// type typ.
func HasValueType(v any, typ string) bool {
	switch v.(type) {
	case string:
		return typ == TypeString
	case bool:
		return typ == TypeBoolean
	case json.Number, float64, int, int64:
		return typ == TypeNumber
	}
	return false
}
