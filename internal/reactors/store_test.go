package reactors

import (
	"context"
	"testing"

	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

// TestProxyStore writes proxies, finds them by their key's MAC, lists
// them with a filter and deletes them with their lookup.
func TestProxyStore(t *testing.T) {
	t.Parallel()
	w := worktest.New(t)
	w.Tenant(t, "t1")
	ctx := context.Background()
	a := &ProxyRecord{ID: "0190a000-0000-7000-8000-000000000001", TenantID: "t1", Name: "Stripe", DestinationURL: "https://a.example", KeyHash: []byte("mac-a")}
	b := &ProxyRecord{ID: "0190a000-0000-7000-8000-000000000002", TenantID: "t1", Name: "Adyen", DestinationURL: "https://b.example", KeyHash: []byte("mac-b")}
	err := w.Update(ctx, func(tx *unit.Tx) error {
		for _, r := range []*ProxyRecord{a, b} {
			if err := PutProxy(tx, r, true); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	notDeleting := func(string) (bool, error) { return false, nil }
	deleting := func(string) (bool, error) { return true, nil }
	err = w.View(ctx, func(tx *unit.Tx) error {
		for _, tc := range []struct {
			name     string
			mac      string
			deleting func(string) (bool, error)
			want     string
		}{
			{"known key", "mac-a", notDeleting, a.ID},
			{"unknown key", "mac-x", notDeleting, ""},
			{"tenant being deleted", "mac-b", deleting, ""},
		} {
			rec, err := ProxyByKey(tx, []byte(tc.mac), tc.deleting)
			got := ""
			if rec != nil {
				got = rec.ID
			}
			if err != nil || got != tc.want {
				t.Errorf("%s: ProxyByKey(%s) = %q, %v; want %q", tc.name, tc.mac, got, err, tc.want)
			}
		}
		page, err := ListProxies(tx, "t1", paging.Pager{Page: 1, Size: 10}, ListFilter{Name: "str*"})
		if err != nil || len(page.Data) != 1 || page.Data[0].ID != a.ID {
			t.Errorf("ListProxies(name str*) = %+v, %v; want %s alone", page, err, a.ID)
		}
		page, err = ListProxies(tx, "t1", paging.Pager{Page: 1, Size: 10}, ListFilter{IDs: []string{b.ID}})
		if err != nil || len(page.Data) != 1 || page.Data[0].ID != b.ID {
			t.Errorf("ListProxies(ids %s) = %+v, %v; want it alone", b.ID, page, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Update(ctx, func(tx *unit.Tx) error { return DeleteProxy(tx, a) }); err != nil {
		t.Fatal(err)
	}
	_ = w.View(ctx, func(tx *unit.Tx) error {
		if rec, err := ProxyByKey(tx, a.KeyHash, notDeleting); rec != nil || err != nil {
			t.Errorf("ProxyByKey after DeleteProxy = %+v, %v; want nil, nil", rec, err)
		}
		return nil
	})
}

func TestCheckProxyRequest(t *testing.T) {
	t.Parallel()
	validName := func(name string, fe unit.FieldErrors) {
		if name == "" {
			fe.Add("name", "is required")
		}
	}
	noProblem := func(string) string { return "" }
	for _, tc := range []struct {
		name    string
		req     ProxyRequest
		problem func(string) string
		field   string // "" for a request that passes
	}{
		{"valid", ProxyRequest{Name: "P", DestinationURL: "https://example.com", ApplicationID: "a1"}, noProblem, ""},
		{"no name", ProxyRequest{DestinationURL: "https://example.com"}, noProblem, "name"},
		{"no destination", ProxyRequest{Name: "P"}, noProblem, "destination_url"},
		{"refused destination", ProxyRequest{Name: "P", DestinationURL: "http://10.0.0.1"}, func(string) string { return "is private" }, "destination_url"},
		{"applications differ", ProxyRequest{Name: "P", DestinationURL: "https://example.com", ApplicationID: "a1", Application: &Ref{ID: "a2"}}, noProblem, "application_id"},
		{"transform without code", ProxyRequest{Name: "P", DestinationURL: "https://example.com", ResponseTransform: &ProxyTransform{}}, noProblem, "response_transform.code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckProxyRequest(&tc.req, validName, tc.problem)
			var fields unit.FieldErrors
			if e, ok := err.(*unit.Error); ok {
				fields = e.Fields
			}
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("CheckProxyRequest(%+v) = %v, want nil", tc.req, err)
			case tc.field != "" && len(fields[tc.field]) == 0:
				t.Errorf("CheckProxyRequest(%+v) = %v, want Invalid at %s", tc.req, err, tc.field)
			}
			if tc.field == "" && (tc.req.Application == nil || tc.req.Application.ID != "a1") {
				t.Errorf("CheckProxyRequest left application %+v, want application_id a1 as application", tc.req.Application)
			}
		})
	}
	var seen []string
	req := &ProxyRequest{RequestTransform: &ProxyTransform{Code: "a"}, ResponseTransform: &ProxyTransform{Code: "b"}}
	_ = ProxyTransformCode(req, func(code, field string) error { seen = append(seen, field+"="+code); return nil })
	if len(seen) != 2 || seen[0] != "request_transform.code=a" || seen[1] != "response_transform.code=b" {
		t.Errorf("ProxyTransformCode checked %v, want request then response transform", seen)
	}
}
