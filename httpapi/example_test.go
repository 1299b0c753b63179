package httpapi_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// Mount the REST interface on your own mux, under any prefix, with an
// access log fed by Options.Observe.
func ExampleNew() {
	ctx := context.Background()
	masterKey := make([]byte, 32)
	rand.Read(masterKey)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: masterKey}})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	boot, _ := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})

	accessLog := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == "time" || a.Key == "duration" || a.Key == "tenant" {
				return slog.Attr{} // vary from run to run
			}
			return a
		},
	}))
	api := httpapi.New(v, httpapi.Options{
		Observe: func(ctx context.Context, o httpapi.Observation) {
			accessLog.Info("request", "method", o.Method, "route", o.Route, "status", o.Status,
				"duration", o.Duration, "tenant", o.TenantID)
		},
	})
	mux := http.NewServeMux()
	mux.Handle("/vault/", http.StripPrefix("/vault", api))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/vault/tenants/self", nil)
	req.Header.Set(httpapi.APIKeyHeader, string(boot.Application.Key))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, strings.Contains(string(body), `"name":"Acme"`))
	// Output:
	// level=INFO msg=request method=GET route=/tenants/self status=200
	// 200 true
}
