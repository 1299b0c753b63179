package httpapi

import "net/http"

// Routes lists the patterns h serves, h being a handler New returned.
func Routes(h http.Handler) []string { return h.(*api).patterns }
