package reactors

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestCodeHeaders(t *testing.T) {
	got, err := CodeHeaders(map[string]any{
		"X-S": "s", "X-B": true, "X-N": json.Number("12"), "X-F": 1.7e9, "X-Tiny": 1e-7, "X-Zero": math0(),
		"X-A": []any{"a", nil, false}, "X-Null": nil, "Content-Length": "99", "Connection": "close",
	})
	if err != nil {
		t.Fatalf("CodeHeaders = %v", err)
	}
	want := http.Header{"X-S": {"s"}, "X-B": {"true"}, "X-N": {"12"}, "X-F": {"1700000000"}, "X-Tiny": {"1e-07"}, "X-Zero": {"0"}, "X-A": {"a", "false"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CodeHeaders (-want +got):\n%s", diff)
	}
	for _, bad := range []map[string]any{
		{"x-obj": map[string]any{}},
		{"x-nested": []any{[]any{"a"}}},
		{"bad name": "v"},
		{"X-Ctl": "a\nb"},
	} {
		_, err := CodeHeaders(bad)
		e, ok := err.(*unit.Error)
		if !ok || e.Kind != unit.CodeFailed || e.Status != 500 || len(e.Fields) != 1 {
			t.Errorf("CodeHeaders(%v) = %v, want CodeFailed naming one header", bad, err)
		}
	}
}

// math0 is a negative zero, which JavaScript writes as 0.
func math0() float64 { z := 0.0; return -z }

func TestCheckHeaders(t *testing.T) {
	if err := CheckHeaders(http.Header{"X-Ok": {"a\tb"}}); err != nil {
		t.Errorf("CheckHeaders(tab in a value) = %v, want nil", err)
	}
	for _, h := range []http.Header{{"X-Bad": {"a\x7fb"}}, {"X Bad": {"v"}}, {"": {"v"}}, {"X-Nul": {"\x00"}}} {
		if e, ok := CheckHeaders(h).(*unit.Error); !ok || e.Kind != unit.Invalid {
			t.Errorf("CheckHeaders(%q) = %v, want Invalid", h, e)
		}
	}
}

func TestForwardAndResponseHeaders(t *testing.T) {
	in := http.Header{"Accept": {"a"}, "Svc-Api-Key": {"k"}, "Svc-Proxy-Key": {"p"}, "Connection": {"close"}, "Content-Length": {"3"}, "Host": {"h"}}
	if diff := cmp.Diff(http.Header{"Accept": {"a"}}, ForwardHeaders(in)); diff != "" {
		t.Errorf("ForwardHeaders (-want +got):\n%s", diff)
	}
	res := http.Header{"Content-Type": {"text/plain"}, "Content-Length": {"3"}, "Transfer-Encoding": {"chunked"}}
	if diff := cmp.Diff(http.Header{"Content-Type": {"text/plain"}, "Content-Length": {"3"}}, ResponseHeaders(res)); diff != "" {
		t.Errorf("ResponseHeaders (-want +got):\n%s", diff)
	}
	if got := HeaderObject(http.Header{"X-A": {"1", "2"}}); got["X-A"] != "1, 2" {
		t.Errorf("HeaderObject = %v, want X-A joined", got)
	}
}
