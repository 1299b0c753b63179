package main

import "net/http"

// The log and the metrics name a request's method and route the same way,
// from a bounded set, so that a client cannot choose what they record: a
// scan of made-up paths or methods adds no new name, no new time series and
// no unbounded log field.

// unmatchedRoute names the route of a request no pattern matched (a 404 or
// 405). No real route is named so: they all start with "/".
const unmatchedRoute = "unmatched"

func routeName(route string) string {
	if route == "" {
		return unmatchedRoute
	}
	return route
}

// methodName is the method if it is one of the standard ones (RFC 9110 and
// PATCH), else "other". The mux answers any other method with a 404 or
// 405, and a client may send any token there.
func methodName(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "other"
}
