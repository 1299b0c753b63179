package events_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// BenchmarkTokenizeWebhook creates one token per op with no webhook, then
// with one subscribed to token.created whose receiver answers 204: the
// cost of queueing the event in the token's transaction and of
// delivering it (the dispatcher runs beside the load). It checks at the
// end that every event was delivered. Run with:
//
//	go test -run XXX -bench TokenizeWebhook -benchmem .
func BenchmarkTokenizeWebhook(b *testing.B) {
	for _, sk := range vaulttest.StoreKinds {
		for _, subscribed := range []bool{false, true} {
			name := "store=" + sk.Name + "/subscriptions=none"
			if subscribed {
				name = "store=" + sk.Name + "/subscriptions=token.created"
			}
			b.Run(name, func(b *testing.B) { benchTokenizeWebhook(b, sk, subscribed) })
		}
	}
}

// benchTokenizeWebhook is one case of BenchmarkTokenizeWebhook.
func benchTokenizeWebhook(b *testing.B, sk vaulttest.StoreKind, subscribed bool) {
	var got atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	e := vaulttest.NewEnvOn(b, sk.Open(b), func(o *tokenvault.Options) { o.Now = time.Now })
	if subscribed {
		if _, err := vaulttest.PutDeliveryWebhook(e.V, e.Boot.Tenant.ID, vaulttest.DeliveryHook{Name: "bench", URL: rcv.URL,
			Secret: hookSecret, Events: []string{tokenvault.EventTokenCreated}}); err != nil {
			b.Fatal(err)
		}
	}
	creator := e.App(b, tokenvault.Private, tokenvault.PermTokenCreate)
	req := tokenvault.TokenRequest{Type: "token", Data: "123-45-6789"}
	n := int64(0)
	for b.Loop() {
		if _, err := e.V.CreateToken(ctx, creator.Key, req); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if !subscribed {
		return
	}
	for deadline := time.Now().Add(time.Minute); got.Load() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d events delivered", got.Load(), n)
		}
	}
}
