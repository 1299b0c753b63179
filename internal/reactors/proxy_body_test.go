package reactors

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKindOfBody(t *testing.T) {
	for ct, want := range map[string]BodyKind{
		"application/json": BodyJSON, "application/problem+json; charset=utf-8": BodyJSON,
		"application/x-www-form-urlencoded": BodyForm, "text/plain": BodyOther, "": BodyOther, "application/json; =": BodyOther,
	} {
		if got := KindOfBody(http.Header{"Content-Type": {ct}}); got != want {
			t.Errorf("KindOfBody(%q) = %d, want %d", ct, got, want)
		}
	}
}

func TestFormRoundTrip(t *testing.T) {
	vals, _ := url.ParseQuery("a=1&b=x&b=y")
	obj := FormObject(vals)
	if diff := cmp.Diff(map[string]any{"a": "1", "b": []any{"x", "y"}}, obj); diff != "" {
		t.Errorf("FormObject (-want +got):\n%s", diff)
	}
	if got := string(EncodeBody(BodyForm, obj)); got != "a=1&b=x&b=y" {
		t.Errorf("EncodeBody(form) = %q, want a=1&b=x&b=y", got)
	}
	if got := string(EncodeBody(BodyForm, map[string]any{"n": json.Number("2"), "o": map[string]any{"k": true}, "z": nil})); got != "n=2&o=%7B%22k%22%3Atrue%7D&z=" {
		t.Errorf("EncodeBody(form of other values) = %q", got)
	}
	if got := string(EncodeBody(BodyJSON, map[string]any{"a": []any{1}})); got != `{"a":[1]}` {
		t.Errorf("EncodeBody(JSON) = %q", got)
	}
	if EncodeBody(BodyJSON, nil) != nil || EncodeBody(BodyOther, "x") != nil {
		t.Errorf("EncodeBody(nil body or Other) is not nil")
	}
}
