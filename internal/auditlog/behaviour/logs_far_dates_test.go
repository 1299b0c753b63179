package auditlog_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestFarDates: dates past 2262 (where Unix nanoseconds overflow) filter
// logs as dates, and an expiry that far ahead is not swept now.
func TestFarDates(t *testing.T) {
	e := vaulttest.NewEnv(t)
	e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	all, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{})
	if err != nil || all.Pagination.TotalItems == 0 {
		t.Fatalf("ListLogs = %+v, %v", all, err)
	}
	before, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EndDate: &far})
	if err != nil || before.Pagination.TotalItems != all.Pagination.TotalItems {
		t.Errorf("logs before the year 3000: %d, %v; want all %d", before.Pagination.TotalItems, err, all.Pagination.TotalItems)
	}
	after, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{StartDate: &far})
	if err != nil || after.Pagination.TotalItems != 0 {
		t.Errorf("logs after the year 3000: %d, %v; want none", after.Pagination.TotalItems, err)
	}

	later := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	app, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "long", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenCreate}, ExpiresAt: &later})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.V.Sweep(ctx); err != nil || n != 0 {
		t.Errorf("Sweep = %d, %v; want nothing due", n, err)
	}
	if _, err := e.V.GetApplication(ctx, e.Mgmt, app.ID); err != nil {
		t.Errorf("the application expiring in 2300: %v", err)
	}
}

// TestExpiryPastTheYear9999: RFC 3339 allows 9999-12-31T23:30:00-01:00,
// which is in the year 10000 in UTC, where no record goes. Such an expiry
// is refused as invalid, on every path that takes one, and nothing is
// written; the last instant of 9999 in UTC is accepted.
func TestExpiryPastTheYear9999(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		key := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenUpdate).Key
		tooFar := time.Date(9999, 12, 31, 23, 30, 0, 0, time.FixedZone("", -3600))
		// Exactly the first instant of 10000 in UTC, which a record holds
		// but no answer can show.
		_, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "edge", Type: tokenvault.Private,
			Permissions: []string{tokenvault.PermTokenRead}, ExpiresAt: new(time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", -3600)))})
		vaulttest.WantKind(t, "CreateApplication expiring at 10000-01-01T00:00:00Z", err, tokenvault.Invalid)
		last := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
		wantRefused := func(what string, err error, field string) {
			t.Helper()
			vaulttest.WantKind(t, what, err, tokenvault.Invalid)
			var ve *tokenvault.Error
			if errors.As(err, &ve) && len(ve.Fields[field]) == 0 {
				t.Errorf("%s: errors %v, want one on %s", what, ve.Fields, field)
			}
		}
		apps, _ := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{})

		_, err = e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "far", Type: tokenvault.Private,
			Permissions: []string{tokenvault.PermTokenRead}, ExpiresAt: &tooFar})
		wantRefused("CreateApplication", err, "expires_at")
		_, err = e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: "x", ExpiresAt: &tooFar})
		wantRefused("CreateToken", err, "expires_at")
		_, err = e.V.Tokenize(ctx, key, map[string]any{"a": map[string]any{"type": "token", "data": "y", "expires_at": "9999-12-31T23:30:00-01:00"}})
		wantRefused("Tokenize", err, "a.expires_at")
		tok, err := e.V.CreateToken(ctx, key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: "z", ExpiresAt: &last})
		if err != nil || !tok.ExpiresAt.Equal(last) {
			t.Fatalf("CreateToken expiring at the end of 9999 = %+v, %v", tok, err)
		}
		_, err = e.V.UpdateToken(ctx, key, tok.ID, json.RawMessage(`{"expires_at": "9999-12-31T23:30:00-01:00"}`))
		wantRefused("UpdateToken", err, "expires_at")
		if got, err := e.V.GetToken(ctx, key, tok.ID); err != nil || !got.ExpiresAt.Equal(last) {
			t.Errorf("the token after a refused update: %+v, %v; want it expiring at %v", got, err, last)
		}
		if _, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "last", Type: tokenvault.Private,
			Permissions: []string{tokenvault.PermTokenRead}, ExpiresAt: &last}); err != nil {
			t.Errorf("CreateApplication expiring at the end of 9999: %v", err)
		}
		if after, _ := e.V.ListApplications(ctx, e.Mgmt, tokenvault.ListApplicationsRequest{}); after.Pagination.TotalItems != apps.Pagination.TotalItems+1 {
			t.Errorf("applications: %d, want %d (the refused one not written)", after.Pagination.TotalItems, apps.Pagination.TotalItems+1)
		}
	})
}
