package auditlog_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkLogList times pages of a tenant's audit log of many lines on
// bbolt: the first page, a page by cursor from the middle of the log, the
// first page of a date range that ends in the middle, and the first page
// of an entity type (token: every line; tenant: one), 20 lines a page.
// It reports the process's peak resident memory while the pages are
// served (VmHWM, reset after the load) beside the Go allocations of a
// page.
//
// It loads 2,000 lines (one per token created) unless
// TOKENVAULT_LOG_BENCH_LINES says how many, so that CI's
// `go test -run XXX -bench . -benchtime=1x ./...` stays cheap:
//
//	TOKENVAULT_LOG_BENCH_LINES=200000 go test -run XXX -bench LogList -benchtime 2s -timeout 30m ./internal/auditlog/behaviour
func BenchmarkLogList(b *testing.B) {
	total := vaulttest.BenchSize(b, "TOKENVAULT_LOG_BENCH_LINES", "lines")
	// The clock, in Unix nanoseconds: the Vault's background tasks (the
	// linker's lease) read it while the loop below moves it on.
	var clock atomic.Int64
	clock.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	v := vaulttest.OpenBenchVault(b, func() time.Time { return time.Unix(0, clock.Load()).UTC() })
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Bench", Owner: tokenvault.User{Email: "o@example.com", FirstName: "O"}})
	if err != nil {
		b.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "bench", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate},
	})
	if err != nil {
		b.Fatal(err)
	}
	batch := min(10_000, total/10) // ten batches at least, so that the middle is one of them
	var middle time.Time
	start := time.Now()
	for n := 0; n < total; n += batch {
		now := time.Unix(0, clock.Add(int64(time.Minute))).UTC() // each batch's lines a minute after the last's
		if n <= total/2 && total/2 < n+batch {
			middle = now
		}
		body := make([]any, batch)
		for i := range body {
			body[i] = fmt.Sprintf("value-%08d", n+i)
		}
		if _, err := v.Tokenize(ctx, app.Key, body); err != nil {
			b.Fatal(err)
		}
	}
	load := time.Since(start)
	mid, err := v.ListLogs(ctx, boot.Application.Key, tokenvault.ListLogsRequest{EndDate: &middle, PageRequest: tokenvault.PageRequest{Size: 1}})
	if err != nil || len(mid.Data) != 1 {
		b.Fatalf("the line before the middle: %v, %v", mid, err)
	}
	cursor := paging.EncodeCursor(barrier.TimeKey(mid.Data[0].CreatedAt) + "/" + mid.Data[0].ID)
	vaulttest.Loaded(b, "lines", total, load)

	for _, bc := range []struct {
		name  string
		req   tokenvault.ListLogsRequest
		lines int // on the page
	}{
		{"first", tokenvault.ListLogsRequest{}, tokenvault.DefaultPageSize},
		{"cursor-middle", tokenvault.ListLogsRequest{PageRequest: tokenvault.PageRequest{Start: cursor}}, tokenvault.DefaultPageSize},
		{"until-middle", tokenvault.ListLogsRequest{EndDate: &middle}, tokenvault.DefaultPageSize},
		// An entity type: one that fills the page at once, and a rare
		// one (the tenant's creation, the log's first line), answered
		// after the walk's budget from its index.
		{"type-token", tokenvault.ListLogsRequest{EntityType: tokenvault.EntityToken}, tokenvault.DefaultPageSize},
		{"type-tenant", tokenvault.ListLogsRequest{EntityType: tokenvault.EntityTenant}, 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page, err := v.ListLogs(ctx, boot.Application.Key, bc.req)
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Data) != bc.lines {
					b.Fatalf("%d lines, want %d", len(page.Data), bc.lines)
				}
			}
			vaulttest.ReportPeakRSS(b)
		})
	}
}
