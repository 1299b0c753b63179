package main

import (
	"context"
	"net/http"
	"time"

	"github.com/tokenvault/tokenvault/httpapi"
)

// observed reports each request to next, a handler outside httpapi (the
// probes, /metrics), to observe as httpapi reports its own: with route as
// the pattern and no tenant, since these routes take no key.
func observed(route string, observe func(context.Context, httpapi.Observation), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK // nothing written: net/http sends 200
		}
		observe(r.Context(), httpapi.Observation{Method: r.Method, Route: route, Status: status, Duration: time.Since(start)})
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
