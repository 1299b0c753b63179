package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// tenantReactor makes a tenant with a reactor running code and a key that
// may invoke it.
func tenantReactor(t *testing.T, v *tokenvault.Vault, name, code string) (key, reactor string) {
	t.Helper()
	ctx := t.Context()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	r, err := v.CreateReactor(ctx, boot.Application.Key, tokenvault.CreateReactorRequest{Name: "r", Code: code})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "user", Type: tokenvault.Private, Permissions: []string{"token:use"}})
	if err != nil {
		t.Fatal(err)
	}
	return string(app.Key), r.ID
}

// react invokes a reactor over HTTP within ctx.
func (s *server) react(ctx context.Context, key, reactor string, args any) (int, []byte, error) {
	body, _ := json.Marshal(map[string]any{"args": args})
	req, err := http.NewRequestWithContext(ctx, "POST", s.srv.URL+"/vault/reactors/"+reactor+"/react", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("SVC-API-KEY", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// TestNewTenantStartsWhileOthersSaturateThePoolOverHTTP: with 3 and with 8
// tenants running 20 s code over HTTP as much as they may (2 at once each,
// three calls each), a tenant with nothing running gets its trivial
// reactor's answer within 10 s. Before, the busy tenants took every worker
// and the newcomer got 503 after waiting out its time.
func TestNewTenantStartsWhileOthersSaturateThePoolOverHTTP(t *testing.T) {
	t.Parallel()
	const slowCode = `module.exports = async () => { await new Promise(r => setTimeout(r, 20000)); return {raw: "slow"} }`
	for _, c := range []struct{ workers, busy int }{{6, 3}, {10, 8}} {
		t.Run(fmt.Sprintf("%d busy tenants, %d workers", c.busy, c.workers), func(t *testing.T) {
			s := newServer(t, httpapi.Options{}, func(o *tokenvault.Options) {
				o.Code.Timeout = 30 * time.Second
				o.Code.Workers = c.workers
				o.Code.ConcurrencyPerTenant = 2
			})
			bKey, bReactor := tenantReactor(t, s.v, "B", `module.exports = async req => ({raw: req.args})`)
			slow, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer func() {
				cancel()
				wg.Wait()
			}()
			for i := range c.busy {
				key, reactor := tenantReactor(t, s.v, fmt.Sprint("Busy ", i), slowCode)
				for range 3 {
					wg.Go(func() { s.react(slow, key, reactor, nil) })
				}
			}
			for deadline := time.Now().Add(60 * time.Second); s.v.Stats().CodeWorkersBusy < c.busy; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the busy tenants hold %d workers, want %d", s.v.Stats().CodeWorkersBusy, c.busy)
				}
			}
			time.Sleep(200 * time.Millisecond) // their other calls wait for workers now

			start := time.Now()
			bctx, bcancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer bcancel()
			status, body, err := s.react(bctx, bKey, bReactor, "hello")
			if err != nil || status != http.StatusOK || string(bytes.TrimSpace(body)) != `{"raw":"hello"}` {
				t.Fatalf("tenant B's reactor after %v: %d %s %v", time.Since(start), status, body, err)
			}
		})
	}
}
