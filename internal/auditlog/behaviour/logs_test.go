package auditlog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

func TestLogs(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		start := e.Clock.Now()
		var apps []*tokenvault.Application
		for i := 0; i < 5; i++ {
			e.Clock.Advance(time.Minute)
			apps = append(apps, e.App(t, tokenvault.Private, "token:read"))
		}
		mid := e.Clock.Now()
		e.Clock.Advance(time.Minute)
		if _, err := e.V.GetApplication(ctx, e.Mgmt, apps[0].ID); err != nil {
			t.Fatal(err)
		}
		if err := e.V.DeleteApplication(ctx, e.Mgmt, apps[0].ID); err != nil {
			t.Fatal(err)
		}

		all, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		// tenant create, owner, management app, 5 apps, read, delete.
		if all.Pagination.TotalItems != 10 {
			t.Fatalf("ListLogs total = %d, want 10: %+v", all.Pagination.TotalItems, all.Data)
		}
		for i := 1; i < len(all.Data); i++ {
			if all.Data[i].CreatedAt.After(all.Data[i-1].CreatedAt) {
				t.Errorf("ListLogs not newest first at %d", i)
			}
		}
		last := all.Data[0]
		if last.Operation != "delete" || last.EntityID != apps[0].ID || last.ActorID != e.Boot.Application.ID ||
			last.ActorType != "application" || last.TenantID != e.Boot.Tenant.ID || last.EntityType != "application" {
			t.Errorf("newest log = %+v", last)
		}

		tests := []struct {
			name string
			req  tokenvault.ListLogsRequest
			want int
		}{
			{"entity type", tokenvault.ListLogsRequest{EntityType: "application"}, 8},
			{"entity", tokenvault.ListLogsRequest{EntityType: "application", EntityID: apps[0].ID}, 3},
			{"tenant", tokenvault.ListLogsRequest{EntityType: "tenant"}, 1},
			{"unknown type", tokenvault.ListLogsRequest{EntityType: "spaceship"}, 0},
			{"start", tokenvault.ListLogsRequest{StartDate: &mid}, 3},
			{"end", tokenvault.ListLogsRequest{EndDate: &mid}, 7},
			{"start inclusive end exclusive", tokenvault.ListLogsRequest{StartDate: &start, EndDate: &mid}, 7},
			{"window on entity", tokenvault.ListLogsRequest{EntityType: "application", EntityID: apps[0].ID, StartDate: &mid}, 2},
		}
		for _, tc := range tests {
			got, err := e.V.ListLogs(ctx, e.Mgmt, tc.req)
			if err != nil {
				t.Errorf("ListLogs(%s) = %v", tc.name, err)
				continue
			}
			if got.Pagination.TotalItems != tc.want || len(got.Data) != tc.want {
				t.Errorf("ListLogs(%s) = %d items (%d data), want %d", tc.name, got.Pagination.TotalItems, len(got.Data), tc.want)
			}
		}

		// Paging walks every line once, then an empty page.
		seen := map[string]bool{}
		for page := 1; ; page++ {
			p, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Page: page, Size: 3}})
			if err != nil {
				t.Fatal(err)
			}
			// The total is a lower bound (ListLogs): the lines up to
			// the end of the page and one more while more follow,
			// exact from the last page on.
			wantTotal := min(3*page+1, 10)
			if p.Pagination.TotalItems != wantTotal || p.Pagination.TotalPages != (wantTotal+2)/3 ||
				p.Pagination.PageSize != 3 || p.Pagination.PageNumber != page {
				t.Errorf("page %d pagination = %+v, want a total of %d", page, p.Pagination, wantTotal)
			}
			if len(p.Data) == 0 {
				break
			}
			for _, l := range p.Data {
				if seen[l.ID] {
					t.Errorf("log %s on two pages", l.ID)
				}
				seen[l.ID] = true
			}
		}
		if len(seen) != 10 {
			t.Errorf("paging saw %d logs, want 10", len(seen))
		}
	})
}

func TestLogsValidation(t *testing.T) {
	e := vaulttest.NewEnv(t)
	now := e.Clock.Now()
	for name, req := range map[string]tokenvault.ListLogsRequest{
		"id without type":  {EntityID: "x"},
		"end before start": {StartDate: &now, EndDate: &now},
		"size too big":     {PageRequest: tokenvault.PageRequest{Size: 101}},
		"negative page":    {PageRequest: tokenvault.PageRequest{Page: -1}},
	} {
		_, err := e.V.ListLogs(ctx, e.Mgmt, req)
		vaulttest.WantKind(t, "ListLogs("+name+")", err, tokenvault.Invalid)
	}
}

func TestEntityTypes(t *testing.T) {
	e := vaulttest.NewEnv(t)
	types, err := e.V.EntityTypes(ctx, e.Mgmt)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, et := range types {
		have[et.Value] = true
		if et.DisplayName == "" {
			t.Errorf("entity type %q has no display name", et.Value)
		}
	}
	for _, want := range []string{"application", "bank", "card", "proxy", "reactor", "token", "tenant"} {
		if !have[want] {
			t.Errorf("EntityTypes lacks %q", want)
		}
	}
}

// TestLogsHoldNoSecrets checks that no key appears in any log line.
func TestLogsHoldNoSecrets(t *testing.T) {
	e := vaulttest.NewEnv(t)
	a := e.App(t, tokenvault.Private, "token:read")
	r, err := e.V.RegenerateApplicationKey(ctx, e.Mgmt, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Size: 100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs.Data {
		for _, secret := range []string{string(e.Mgmt), string(a.Key), string(r.Key), string(e.Key)} {
			if strings.Contains(l.Message, secret) || strings.Contains(l.EntityID, secret) {
				t.Errorf("log %+v holds a secret", l)
			}
		}
	}
}
