package openapitest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPathParams(t *testing.T) {
	for _, tc := range []struct {
		template, path string
		want           map[string]string
	}{
		{"/tokens", "/tokens", map[string]string{}},
		{"/tokens/{id}", "/tokens/abc", map[string]string{"id": "abc"}},
		{"/applications/{id}/regenerate", "/applications/x/regenerate", map[string]string{"id": "x"}},
		{"/proxy/{rest}", "/proxy/a/b/c", map[string]string{"rest": "a/b/c"}},
		{"/proxy/{rest}", "/proxy/", map[string]string{"rest": ""}},
		{"/tokens/{id}", "/tokens", nil},
		{"/applications/{id}/regenerate", "/applications/x/other", nil},
		{"/tokens", "/tokens/x", nil},
	} {
		got, err := pathParams(tc.template, tc.path)
		if tc.want == nil {
			if err == nil {
				t.Errorf("pathParams(%q, %q) = %v, want an error", tc.template, tc.path, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("pathParams(%q, %q): %v", tc.template, tc.path, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("pathParams(%q, %q) (-want +got):\n%s", tc.template, tc.path, diff)
		}
	}
}
