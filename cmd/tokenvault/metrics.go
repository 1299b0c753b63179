package main

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/tokenvault/tokenvault/httpapi"
)

// durationBuckets are the upper bounds, in seconds, of the request duration
// histogram (Prometheus's default buckets): from a cached key check to a
// proxy call waiting on a slow destination.
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// requestKey labels tokenvault_http_requests_total.
type requestKey struct {
	method, route string
	status        int
}

// routeKey labels tokenvault_http_request_duration_seconds.
type routeKey struct{ method, route string }

// histogram counts observations per bucket: counts[i] those in
// (durationBuckets[i-1], durationBuckets[i]], the last one those above
// every bound. They are added up when written, as the format wants.
type histogram struct {
	counts []uint64
	sum    float64 // seconds
	count  uint64
}

// metrics counts the requests the server answers, for GET /metrics
// (metrics_text.go), from the same Observe hook as the request log.
//
// Its cardinality is bounded whatever clients send: method is one of ten
// names and route one of the fixed set of patterns the server registers or
// "unmatched" (names.go), and status is a code the server wrote (100-999;
// net/http refuses others). There is deliberately no tenant label: tenants
// are created at run time without limit, and every tenant would multiply
// the series, in this process and in Prometheus; per-tenant activity is
// what the audit log (GET /logs) is for.
type metrics struct {
	mu        sync.Mutex
	requests  map[requestKey]uint64
	durations map[routeKey]*histogram
	inFlight  atomic.Int64
}

func newMetrics() *metrics {
	return &metrics{requests: map[requestKey]uint64{}, durations: map[routeKey]*histogram{}}
}

// observe counts one answered request. It is an httpapi Observe hook.
func (m *metrics) observe(_ context.Context, o httpapi.Observation) {
	method, route := methodName(o.Method), routeName(o.Route)
	seconds := o.Duration.Seconds()
	i := 0
	for i < len(durationBuckets) && seconds > durationBuckets[i] {
		i++
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[requestKey{method, route, o.Status}]++
	h := m.durations[routeKey{method, route}]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(durationBuckets)+1)}
		m.durations[routeKey{method, route}] = h
	}
	h.counts[i]++
	h.sum += seconds
	h.count++
}

// track counts the requests next is serving, for
// tokenvault_http_requests_in_flight. A scrape sees itself among them.
func (m *metrics) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.inFlight.Add(1)
		defer m.inFlight.Add(-1)
		next.ServeHTTP(w, r)
	})
}
