package cli

import "github.com/tokenvault/tokenvault/prommetrics"

// The log and the metrics name a request's method and route the same way,
// from a bounded set, so that a client cannot choose what they record: a
// scan of made-up paths or methods adds no new name, no new time series and
// no unbounded log field. The metrics' functions decide for both.

// routeName is the route pattern, or "unmatched" for a request no pattern
// matched (a 404 or 405).
func routeName(route string) string { return prommetrics.RouteName(route) }

// methodName is the method if it is one of the standard ones (RFC 9110 and
// PATCH), else "other".
func methodName(method string) string { return prommetrics.MethodName(method) }
