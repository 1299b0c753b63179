package httpapi

import "net/http"

// Every answer of the API, success or error, on every route (operator
// routes, proxy invocations and the mux's own 404 and 405 included),
// carries Cache-Control: no-store, X-Content-Type-Options: nosniff and
// Content-Security-Policy: sandbox. Answers carry keys (a created
// application's), revealed data (detokenize, a proxy's answer) and tokens:
// no cache between the caller and the Vault, nor the browser's, may keep
// them, and no browser may read a JSON answer as anything else. A proxy
// passes its destination's answer through, Content-Type included: a
// tenant's destination answering text/html with a script would run it on
// the vault's origin, beside the web console's key and the hosted card
// fields, if a browser were sent to the proxy's URL (the key may ride in
// its query). sandbox makes any document the API answers an origin of its
// own, with no script. The headers are set when the answer starts, after
// the handler's own: a destination's or tenant code's Cache-Control or
// Content-Security-Policy does not loosen them.

// secureHeaders forces the three headers on whatever is written through it.
type secureHeaders struct {
	http.ResponseWriter
	started bool
}

func (s *secureHeaders) set() {
	if s.started {
		return
	}
	s.started = true
	h := s.ResponseWriter.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
}

func (s *secureHeaders) WriteHeader(code int) {
	if code >= 200 {
		s.set() // an informational answer (103) is not the answer
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *secureHeaders) Write(b []byte) (int, error) {
	s.set()
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *secureHeaders) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// NoStore serves h with the headers every answer of the API carries
// (Cache-Control: no-store, X-Content-Type-Options: nosniff), for the
// routes a server serves beside the API (liveness and readiness probes,
// metrics), so that every answer of its origin but the console's files
// has them.
func NoStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&secureHeaders{ResponseWriter: w}, r)
	})
}
