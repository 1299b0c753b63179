package reactors_test

import (
	"encoding/json"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestAsyncInvocationGetsItsTimeout: an asynchronous invocation runs for
// its timeout_ms, not for the shorter synchronous CodeTimeout.
func TestAsyncInvocationGetsItsTimeout(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Code.Timeout = 500 * time.Millisecond })
	rc := &receiver{got: make(chan struct{}, 1)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	r := e.Reactor(t, tokenvault.CreateReactorRequest{
		Code: `module.exports = async () => { await new Promise(r => setTimeout(r, 800)); return {raw: "done"} }`})
	key := e.User(t)
	_, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{})
	if tokenvault.ErrorKind(err) != tokenvault.CodeFailed {
		t.Fatalf("synchronous run past CodeTimeout = %v, want a timeout", err)
	}
	if _, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{CallbackURL: srv.URL, TimeoutMS: 10000}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rc.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook delivered")
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var hook tokenvault.Webhook
	if err := json.Unmarshal(rc.bodies[0], &hook); err != nil || hook.Status != "succeeded" {
		t.Errorf("webhook = %s, want succeeded", rc.bodies[0])
	}
}

// TestAsyncInvocationsAreBounded: past MaxAsyncInvocations in progress, or
// once the Vault is closing, an asynchronous invocation is Unavailable;
// Close racing with invocations is clean (run with -race).
func TestAsyncInvocationsAreBounded(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New())
	srv := httptest.NewServer(&receiver{got: make(chan struct{}, 1000)})
	defer srv.Close()
	r := e.Reactor(t, tokenvault.CreateReactorRequest{
		Code: `module.exports = async () => { await new Promise(r => setTimeout(r, 60000)) }`})
	key := e.User(t)
	invoke := func() error {
		_, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{CallbackURL: srv.URL, TimeoutMS: 100000})
		return err
	}
	for i := range tokenvault.MaxAsyncInvocations {
		if err := invoke(); err != nil {
			t.Fatalf("invocation %d: %v", i+1, err)
		}
	}
	if err := invoke(); tokenvault.ErrorKind(err) != tokenvault.Unavailable {
		t.Errorf("invocation %d = %v, want Unavailable", tokenvault.MaxAsyncInvocations+1, err)
	}

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { invoke() })
	}
	e.V.Close() // cancels the 64 runs and waits for them
	wg.Wait()
	if err := invoke(); tokenvault.ErrorKind(err) != tokenvault.Unavailable {
		t.Errorf("after Close = %v, want Unavailable", err)
	}
}
