package httpapi

import (
	"reflect"
	"testing"

	"github.com/tokenvault/tokenvault"
)

type selfRef struct {
	Next *selfRef          `json:"next"`
	Tags map[string]string `json:"tags"`
}

// A body is read again for nulls in maps of strings only when the type it
// decodes into can hold one: a reactor's args, with null in them, are
// decoded once.
func TestHoldsStringMap(t *testing.T) {
	var invoke struct {
		Args        any    `json:"args"`
		CallbackURL string `json:"callback_url"`
	}
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{&tokenvault.TokenRequest{}, true},
		{&selfRef{}, true},
		{&[]map[string]string{}, true},
		{&invoke, false},
		{&tokenvault.SearchTokensRequest{}, false},
		{new(any), false},
	} {
		if got := holdsStringMap(reflect.TypeOf(tc.v)); got != tc.want {
			t.Errorf("holdsStringMap(%T) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
