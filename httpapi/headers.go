package httpapi

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Keys are read once. A request carrying two SVC-API-KEY headers, or two
// different proxy keys (in SVC-PROXY-KEY headers and svc-proxy-key query
// parameters), is refused with 400 before anything is authenticated: a
// front proxy, a WAF or a log pipeline may read the other one than we do,
// and decide (rate limit, audit, route) on a key that is not the one the
// Vault acts on. The same proxy key in the header and the query, as
// clients that add the header to a URL carrying the key send it, is one
// key.

// twiceAPIKey is the error for a request with more than one API key, or
// nil.
func twiceAPIKey(r *http.Request) error {
	if len(r.Header.Values(APIKeyHeader)) > 1 {
		return invalid(APIKeyHeader, "must be sent once: the request has two API keys")
	}
	return nil
}

// proxyKey returns the proxy key of a /proxy request, from the
// SVC-PROXY-KEY header or the svc-proxy-key query parameter, and an
// Invalid error when there is more than one.
func proxyKey(r *http.Request) (string, error) {
	keys := r.Header.Values(ProxyKeyHeader)
	if r.URL.RawQuery != "" {
		for _, part := range strings.Split(r.URL.RawQuery, "&") {
			name, value, _ := strings.Cut(part, "=")
			if n, err := url.QueryUnescape(name); err == nil && n == ProxyKeyParam {
				v, err := url.QueryUnescape(value)
				if err != nil {
					return "", invalid(ProxyKeyParam, "is not a valid query parameter")
				}
				keys = append(keys, v)
			}
		}
	}
	if len(keys) == 0 {
		return "", nil
	}
	if !slices.ContainsFunc(keys, func(k string) bool { return k != keys[0] }) {
		return keys[0], nil
	}
	return "", invalid(ProxyKeyHeader, "send one proxy key, in the "+ProxyKeyHeader+" header or the "+ProxyKeyParam+" query parameter: the request has two different ones")
}
