package vaulttest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
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
