package listing_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkTokenList times token list pages in a tenant of many tokens on
// bbolt: the first page, a page by cursor from the middle of the list,
// pages filtered by type (a type with a few tokens, and one with none),
// and by container (one of the plain tokens' containers, and an ancestor
// of them all), 20 tokens a page. It reports the process's peak resident
// memory while the pages are served (VmHWM, reset after the load) beside
// the Go allocations of a page.
//
// It loads 2,000 tokens unless TOKENVAULT_LIST_BENCH_TOKENS says how many,
// so that CI's `go test -run XXX -bench . -benchtime=1x ./...` stays
// cheap. The plain tokens are spread over TOKENVAULT_LIST_BENCH_SHAPES
// containers (/customers/<n>/, 4 unless set): each is a list shape, so
// 1000 shows a tenant past maxListShapes. The figures of the issue are
// for a million:
//
//	TOKENVAULT_LIST_BENCH_TOKENS=1000000 go test -run XXX -bench TokenList -benchtime 2s -timeout 30m ./internal/tokens/listing/behaviour
func BenchmarkTokenList(b *testing.B) {
	total := vaulttest.BenchSize(b, "TOKENVAULT_LIST_BENCH_TOKENS", "tokens")
	shapes := 4
	if s := os.Getenv("TOKENVAULT_LIST_BENCH_SHAPES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("TOKENVAULT_LIST_BENCH_SHAPES=%q: want a number of containers", s)
		}
		shapes = n
	}
	v := vaulttest.OpenBenchVault(b, nil)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Bench", Owner: tokenvault.User{Email: "o@example.com", FirstName: "O"}})
	if err != nil {
		b.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "bench", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead},
	})
	if err != nil {
		b.Fatal(err)
	}
	batch := min(10_000, total)
	var middle string
	start := time.Now()
	for n := 0; n < total; n += batch {
		body := make([]any, batch)
		for i := range body {
			body[i] = map[string]any{"type": tokenvault.TypeToken, "data": fmt.Sprintf("value-%08d", n+i),
				"containers": []any{fmt.Sprintf("/customers/%04d/", (n+i)%shapes)}}
		}
		out, err := v.Tokenize(ctx, app.Key, body)
		if err != nil {
			b.Fatal(err)
		}
		if n <= total/2 && total/2 < n+batch {
			middle = out.([]any)[total/2-n].(*tokenvault.Token).ID
		}
		card := tokenvault.TokenRequest{Type: tokenvault.TypeCard, Data: map[string]any{"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2039}}
		if _, err := v.CreateToken(ctx, app.Key, card); err != nil {
			b.Fatal(err)
		}
	}
	load := time.Since(start)
	mid, err := v.GetToken(ctx, app.Key, middle)
	if err != nil {
		b.Fatal(err)
	}
	cursor := paging.EncodeCursor(barrier.TimeKey(mid.CreatedAt) + "/" + mid.ID)
	vaulttest.Loaded(b, "tokens", total, load)

	for _, bc := range []struct {
		name string
		req  tokenvault.ListTokensRequest
		want int
	}{
		{"first", tokenvault.ListTokensRequest{}, tokenvault.DefaultPageSize},
		{"cursor-middle", tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Start: cursor}}, tokenvault.DefaultPageSize},
		{"type-card", tokenvault.ListTokensRequest{Type: tokenvault.TypeCard}, min(tokenvault.DefaultPageSize, (total+batch-1)/batch)},
		{"type-bank-none", tokenvault.ListTokensRequest{Type: tokenvault.TypeBank}, 0},
		{"container-one", tokenvault.ListTokensRequest{Container: "/customers/0000/"}, min(tokenvault.DefaultPageSize, total/shapes)},
		{"container-all", tokenvault.ListTokensRequest{Container: "/customers/"}, tokenvault.DefaultPageSize},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page, err := v.ListTokens(ctx, app.Key, bc.req)
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Data) != bc.want {
					b.Fatalf("%d tokens, want %d", len(page.Data), bc.want)
				}
			}
			vaulttest.ReportPeakRSS(b)
		})
	}
}
