package reactors

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

func TestForward(t *testing.T) {
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Method", r.Method)
		w.Header().Set("X-Got", r.Header.Get("X-Sent"))
		w.Header().Set("Connection", "keep-alive")
		w.Write(b)
	}))
	t.Cleanup(dest.Close)
	ctx := context.Background()
	res, err := Forward(ctx, dest.Client(), 10, http.MethodPost, dest.URL+"/p", http.Header{"X-Sent": {"1"}}, []byte("hello"))
	if err != nil {
		t.Fatalf("Forward = %v", err)
	}
	if res.Status != 200 || string(res.Body) != "hello" || res.Header.Get("X-Method") != "POST" || res.Header.Get("X-Got") != "1" || res.Header.Get("Connection") != "" {
		t.Errorf("Forward = %d %v %q, want the echo of a POST without hop-by-hop headers", res.Status, res.Header, res.Body)
	}
	_, err = Forward(ctx, dest.Client(), 4, http.MethodPost, dest.URL, http.Header{}, []byte("hello"))
	if e, ok := err.(*unit.Error); !ok || e.Kind != unit.BadGateway || e.Message != "the destination answered more than 4 bytes" {
		t.Errorf("Forward(an answer over the limit) = %v, want BadGateway naming the limit", err)
	}
	_, err = Forward(ctx, dest.Client(), 10, "BAD METHOD", dest.URL+"/secret", http.Header{}, nil)
	if e, ok := err.(*unit.Error); !ok || e.Kind != unit.Invalid || strings.Contains(e.Error(), "secret") {
		t.Errorf("Forward(a request that cannot be built) = %v, want Invalid without the URL", err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	target := closed.URL + "/secret"
	closed.Close()
	_, err = Forward(ctx, &http.Client{}, 10, http.MethodGet, target, http.Header{}, nil)
	if e, ok := err.(*unit.Error); !ok || e.Kind != unit.BadGateway || strings.Contains(e.Error(), "secret") {
		t.Errorf("Forward(a closed destination) = %v, want BadGateway without the URL", err)
	}
}

func TestTransformResult(t *testing.T) {
	c := &Code{MaxResultBytes: 20}
	given := map[string]any{"a": "1"}
	in := http.Header{"X-In": {"1"}}
	body, h, err := c.TransformResult(map[string]any{}, given, BodyJSON, in)
	if err != nil || string(body) != `{"a":"1"}` || h.Get("X-In") != "1" {
		t.Errorf("TransformResult(nothing returned) = %q, %v, %v, want the input's", body, h, err)
	}
	body, h, err = c.TransformResult(map[string]any{"body": map[string]any{"b": "2"}, "headers": map[string]any{"X-Out": "2"}}, given, BodyForm, in)
	if err != nil || string(body) != "b=2" || h.Get("X-Out") != "2" || h.Get("X-In") != "" {
		t.Errorf("TransformResult(body and headers) = %q, %v, %v, want the code's", body, h, err)
	}
	for _, tt := range []struct {
		out  any
		kind unit.Kind
	}{
		{"not an object", unit.CodeFailed},
		{map[string]any{"headers": "x"}, unit.CodeFailed},
		{map[string]any{"body": strings.Repeat("x", 30)}, unit.TooLarge},
	} {
		_, _, err := c.TransformResult(tt.out, given, BodyJSON, in)
		if e, ok := err.(*unit.Error); !ok || e.Kind != tt.kind {
			t.Errorf("TransformResult(%v) = %v, want kind %v", tt.out, err, tt.kind)
		}
	}
	// A body the code left out is the one it was given, however large.
	big := map[string]any{"a": strings.Repeat("x", 30)}
	if _, _, err := c.TransformResult(map[string]any{}, big, BodyJSON, in); err != nil {
		t.Errorf("TransformResult(the given body, over the limit) = %v, want nil", err)
	}
}
