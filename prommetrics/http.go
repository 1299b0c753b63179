package prommetrics

import (
	"context"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tokenvault/tokenvault/httpapi"
)

// HTTP counts the requests a server answers, from httpapi's Observe hook:
//
//	tokenvault_http_requests_total{method,route,status}         counter
//	tokenvault_http_request_duration_seconds{method,route}      histogram
//	tokenvault_http_requests_in_flight                          gauge
//
// Labels are bounded whatever clients send: method is one of the nine
// standard methods or "other", route the pattern that matched (such as
// "/tokens/{id}", never the path) or "unmatched", status a code the server
// wrote. There is no tenant label: tenants are created without limit, and
// per-tenant activity is what the audit log is for.
type HTTP struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

// NewHTTP returns request metrics registered with reg (none when nil). It
// panics if reg already holds metrics of the same names.
func NewHTTP(reg prometheus.Registerer) *HTTP {
	h := &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenvault_http_requests_total",
			Help: "HTTP requests answered, by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tokenvault_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by method and route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tokenvault_http_requests_in_flight",
			Help: "HTTP requests being served, this scrape included.",
		}),
	}
	if reg != nil {
		reg.MustRegister(h.requests, h.duration, h.inFlight)
	}
	return h
}

// Observe counts one answered request. It is an httpapi Observe hook (and
// one for httpapi.Observed).
func (h *HTTP) Observe(_ context.Context, o httpapi.Observation) {
	method, route := MethodName(o.Method), RouteName(o.Route)
	h.requests.WithLabelValues(method, route, strconv.Itoa(o.Status)).Inc()
	h.duration.WithLabelValues(method, route).Observe(o.Duration.Seconds())
}

// InFlight counts the requests next is serving, for
// tokenvault_http_requests_in_flight. Wrap the whole handler with it.
func (h *HTTP) InFlight(next http.Handler) http.Handler {
	return promhttp.InstrumentHandlerInFlight(h.inFlight, next)
}

// UnmatchedRoute names the route of a request no pattern matched (a 404 or
// 405). No real route is named so: they all start with "/".
const UnmatchedRoute = "unmatched"

// RouteName is route, or UnmatchedRoute when it is empty.
func RouteName(route string) string {
	if route == "" {
		return UnmatchedRoute
	}
	return route
}

// MethodName is method if it is one of the standard ones (RFC 9110 and
// PATCH), else "other": a client may send any token as a method, and the
// mux answers those with a 404 or 405.
func MethodName(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "other"
}
