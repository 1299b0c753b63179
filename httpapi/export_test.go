package httpapi

import "net/http"

// Routes lists the patterns h serves, h being a handler New returned.
func Routes(h http.Handler) []string { return h.(*api).patterns }

// QueryParams maps each pattern h serves to the query parameters it
// accepts.
func QueryParams(h http.Handler) map[string][]string { return h.(*api).query }
