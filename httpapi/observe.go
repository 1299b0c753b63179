package httpapi

import (
	"context"
	"net/http"
	"time"
)

// Observation describes one request the handler served. It holds nothing
// a caller sent (no body, header, query string or key), so it may be logged
// as it is.
type Observation struct {
	// Method is the method as sent. On a route that did not match, a
	// client may send any token here: map it to a fixed set before using
	// it as a metric label.
	Method string
	// Route is the pattern that matched, such as "/tokens/{id}", or ""
	// when none did (a 404 or 405).
	Route    string
	Status   int
	Duration time.Duration
	// TenantID is the tenant the request's key belonged to, or "" when
	// no key was accepted.
	TenantID string
}

// Observed wraps a handler of your own, served next to the API (a health
// probe, a metrics page), so that observe sees its requests as it sees the
// API's: with route as the pattern, and no tenant.
func Observed(route string, observe func(context.Context, Observation), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		observe(r.Context(), Observation{Method: r.Method, Route: route, Status: rec.written(), Duration: time.Since(start)})
	})
}

// statusRecorder remembers the first status written through it.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// written is the status sent, 200 if the handler wrote nothing (net/http
// sends 200 then).
func (r *statusRecorder) written() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}
