package vaulttest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store"
)

// From returns a context for one call from client address addr.
func From(addr string) context.Context {
	return tokenvault.WithCallInfo(context.Background(), &tokenvault.CallInfo{ClientAddress: addr})
}

// Hammer makes n calls of call, concurrency at a time, and counts the
// answers by kind ("ok" for none); any kind but ok and the ones in allowed
// fails the test.
func Hammer(t *testing.T, n, concurrency int, call func(i int) error, allowed ...tokenvault.Kind) map[string]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				err := call(i)
				kind := "ok"
				if err != nil {
					kind = tokenvault.ErrorKind(err).String()
				}
				mu.Lock()
				counts[kind]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for kind := range counts {
		ok := kind == "ok"
		for _, a := range allowed {
			ok = ok || kind == a.String()
		}
		if !ok {
			t.Errorf("answers %v: %s is unexpected", counts, kind)
		}
	}
	return counts
}

// WantRateLimited fails unless err is RateLimited with a RetryAfter in
// (0, max].
func WantRateLimited(t *testing.T, what string, err error, max time.Duration) {
	t.Helper()
	WantKind(t, what, err, tokenvault.RateLimited)
	e := err.(*tokenvault.Error)
	if e.RetryAfter <= 0 || e.RetryAfter > max {
		t.Errorf("%s: RetryAfter = %v, want in (0, %v]", what, e.RetryAfter, max)
	}
}

// WantPendingCap fails unless err is RateLimited with a RetryAfter.
func WantPendingCap(t *testing.T, what string, err error) {
	t.Helper()
	var te *tokenvault.Error
	if !errors.As(err, &te) || te.Kind != tokenvault.RateLimited || te.RetryAfter <= 0 || !strings.Contains(te.Message, "pending") {
		t.Fatalf("%s: %v, want RateLimited (pending deliveries) with a RetryAfter", what, err)
	}
}

// PendingEntries counts the index entries of sessions waiting for
// authorization in s: per application, and per application and address.
func PendingEntries(t *testing.T, s store.Store) (perApp, perAddress int) {
	t.Helper()
	for k := range Dump(t, s) {
		switch {
		case strings.Contains(k, "/idx/pending-session/"):
			perApp++
		case strings.Contains(k, "/idx/pending-session-addr/"):
			perAddress++
		}
	}
	return perApp, perAddress
}
