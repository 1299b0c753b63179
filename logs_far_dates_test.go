package tokenvault_test

import (
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

// TestFarDates: dates past 2262 (where Unix nanoseconds overflow) filter
// logs as dates, and an expiry that far ahead is not swept now.
func TestFarDates(t *testing.T) {
	e := newEnv(t)
	e.app(t, tokenvault.Private, tokenvault.PermTokenCreate)
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	all, err := e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{})
	if err != nil || all.Pagination.TotalItems == 0 {
		t.Fatalf("ListLogs = %+v, %v", all, err)
	}
	before, err := e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{EndDate: &far})
	if err != nil || before.Pagination.TotalItems != all.Pagination.TotalItems {
		t.Errorf("logs before the year 3000: %d, %v; want all %d", before.Pagination.TotalItems, err, all.Pagination.TotalItems)
	}
	after, err := e.v.ListLogs(ctx, e.mgmt, tokenvault.ListLogsRequest{StartDate: &far})
	if err != nil || after.Pagination.TotalItems != 0 {
		t.Errorf("logs after the year 3000: %d, %v; want none", after.Pagination.TotalItems, err)
	}

	later := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	app, err := e.v.CreateApplication(ctx, e.mgmt, tokenvault.CreateApplicationRequest{Name: "long", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenCreate}, ExpiresAt: &later})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.v.Sweep(ctx); err != nil || n != 0 {
		t.Errorf("Sweep = %d, %v; want nothing due", n, err)
	}
	if _, err := e.v.GetApplication(ctx, e.mgmt, app.ID); err != nil {
		t.Errorf("the application expiring in 2300: %v", err)
	}
}
