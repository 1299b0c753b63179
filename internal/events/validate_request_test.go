package events

import (
	"errors"
	"testing"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestCheckNamesTheField: Check refuses a request naming each field in
// error (the name by the Vault's rules, notify_email as a bare public
// address, the url by the outbound policy), and fills the default status
// of one that passes.
func TestCheckNamesTheField(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ok := Request{Name: "h", URL: "https://hooks.example.com/in", Events: []string{"*"}, NotifyEmail: "ops@example.com"}
	for _, c := range []struct {
		name  string
		edit  func(*Request)
		field string
	}{
		{"name", func(r *Request) { r.Name = "a\x00b" }, "name"},
		{"notify_email not bare", func(r *Request) { r.NotifyEmail = "Ops <ops@example.com>" }, "notify_email"},
		{"notify_email at an IP literal", func(r *Request) { r.NotifyEmail = "ops@[127.0.0.1]" }, "notify_email"},
		{"url not https", func(r *Request) { r.URL = "http://hooks.example.com/in" }, "url"},
		{"url loopback", func(r *Request) { r.URL = "https://127.0.0.1/in" }, "url"},
	} {
		req := ok
		c.edit(&req)
		err := h.svc.Check(&req)
		var e *unit.Error
		if !errors.As(err, &e) || e.Kind != unit.Invalid || len(e.Fields[c.field]) == 0 {
			t.Errorf("%s: Check = %v, want Invalid on %s", c.name, err, c.field)
		}
	}
	req := ok
	if err := h.svc.Check(&req); err != nil || req.Status != Enabled {
		t.Errorf("Check(a valid request) = %v, status %q", err, req.Status)
	}
}
