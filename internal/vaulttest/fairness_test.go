package vaulttest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// slowCode holds its worker for 20 s: far longer than a newcomer may wait.
const slowCode = `module.exports = async () => { await new Promise(r => setTimeout(r, 20000)); return {raw: "slow"} }`

// fairnessCase is a pool and how many tenants saturate it. With 2 per
// tenant, workers − 2 is the reserve for tenants with nothing running, so
// busy tenants hold at most 1 + busy workers (each its first invocation,
// one of them perhaps a second) and one stays free; before, each busy
// tenant held its 2 and the pool was full.
type fairnessCase struct{ workers, busy int }

var fairnessCases = []fairnessCase{{workers: 6, busy: 3}, {workers: 10, busy: 8}}

func fairnessOptions(c fairnessCase) func(*tokenvault.Options) {
	return func(o *tokenvault.Options) {
		o.Code.Timeout = 30 * time.Second
		o.Code.Workers = c.workers
		o.Code.ConcurrencyPerTenant = 2
	}
}

// tenantReactor makes a tenant with a reactor running code and a key that
// may invoke it.
func tenantReactor(t *testing.T, v *tokenvault.Vault, name, code string) (key tokenvault.Credential, reactor string) {
	t.Helper()
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
	return app.Key, r.ID
}

// saturate makes c.busy tenants invoke slow code, three calls at once
// each (more than they may run), through invoke, until the returned stop
// is called; it returns once each holds a worker and the rest wait.
func saturate(t *testing.T, v *tokenvault.Vault, c fairnessCase, invoke func(ctx context.Context, key tokenvault.Credential, reactor string)) (stop func()) {
	t.Helper()
	slow, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range c.busy {
		key, reactor := tenantReactor(t, v, fmt.Sprint("Busy ", i), slowCode)
		for range 3 {
			wg.Go(func() { invoke(slow, key, reactor) })
		}
	}
	stop = func() {
		cancel()
		wg.Wait()
	}
	want := c.busy // at least one each
	for deadline := time.Now().Add(60 * time.Second); v.Stats().CodeWorkersBusy < want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("the busy tenants hold %d workers, want %d", v.Stats().CodeWorkersBusy, want)
		}
	}
	time.Sleep(200 * time.Millisecond) // their other calls wait for workers now
	return stop
}

// TestNewTenantStartsWhileOthersSaturateThePool: with 3 and with 8 tenants
// running slow code as much as they may, a tenant with nothing running
// gets a worker at once and its trivial reactor answers well within the
// slow code's 20 s. Before, two tenants at half the pool each took every
// worker, and the newcomer waited for their code to end.
func TestNewTenantStartsWhileOthersSaturateThePool(t *testing.T) {
	for _, c := range fairnessCases {
		t.Run(fmt.Sprintf("%d busy tenants, %d workers", c.busy, c.workers), func(t *testing.T) {
			e := vaulttest.NewEnvOn(t, memory.New(), fairnessOptions(c))
			bKey, bReactor := tenantReactor(t, e.V, "B", `module.exports = async req => ({raw: req.args})`)
			stop := saturate(t, e.V, c, func(ctx context.Context, key tokenvault.Credential, reactor string) {
				e.V.InvokeReactor(ctx, key, reactor, tokenvault.InvokeReactorRequest{})
			})
			defer stop()
			start := time.Now()
			bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			res, err := e.V.InvokeReactor(bctx, bKey, bReactor, tokenvault.InvokeReactorRequest{Args: "hello"})
			if err != nil || res.Raw != "hello" {
				t.Fatalf("tenant B's reactor after %v: %v, %v", time.Since(start), res, err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("tenant B's reactor took %v", took)
			}
			if busy := e.V.Stats().CodeWorkersBusy; busy < c.busy || busy > 1+c.busy {
				t.Errorf("after B: %d workers busy, want the busy tenants' %d or %d", busy, c.busy, 1+c.busy)
			}
		})
	}
}
