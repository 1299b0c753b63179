package recordfix

import (
	"reflect"

	"github.com/tokenvault/tokenvault/internal/access"
)

// RuleFieldPaths are the field paths FieldPaths gives for an
// application's access rules and their conditions, which a record and the
// API's Application both hold (as []access.Rule).
var RuleFieldPaths = []string{"Rules[].Description", "Rules[].Priority", "Rules[].Container", "Rules[].Conditions",
	"Rules[].Conditions[].Attribute", "Rules[].Conditions[].Operator", "Rules[].Conditions[].Value",
	"Rules[].Transform", "Rules[].Permissions", "Rules[].Purposes"}

// FieldPaths lists the fields of struct type rt in order, and after a
// field of type []access.Rule or []access.Condition the fields of its
// elements ("Rules[].Description"): the tests that hold a record's fields
// and its API type's to a list compare these. Embedded fields are listed
// in embedded too: records and API types are kept apart, so a test fails
// on any.
func FieldPaths(rt reflect.Type) (paths, embedded []string) {
	var walk func(reflect.Type, string)
	walk = func(rt reflect.Type, prefix string) {
		for f := range rt.Fields() {
			if f.Anonymous {
				embedded = append(embedded, rt.Name()+"."+f.Name)
			}
			paths = append(paths, prefix+f.Name)
			if f.Type == reflect.TypeFor[[]access.Rule]() || f.Type == reflect.TypeFor[[]access.Condition]() {
				walk(f.Type.Elem(), prefix+f.Name+"[].")
			}
		}
	}
	walk(rt, "")
	return paths, embedded
}
