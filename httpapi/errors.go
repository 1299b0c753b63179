package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/tokenvault/tokenvault"
)

// Problem is the RFC 7807 body of every error response.
type Problem struct {
	Type   string              `json:"type"`
	Title  string              `json:"title"`
	Status int                 `json:"status"`
	Detail string              `json:"detail,omitempty"`
	Errors map[string][]string `json:"errors,omitempty"`
}

// statusOf maps every error kind to its HTTP status. A test walks
// tokenvault.Kinds() so this table cannot go stale.
var statusOf = map[tokenvault.Kind]int{
	tokenvault.Internal:             http.StatusInternalServerError,
	tokenvault.Invalid:              http.StatusBadRequest,
	tokenvault.Unauthenticated:      http.StatusUnauthorized,
	tokenvault.PermissionDenied:     http.StatusForbidden,
	tokenvault.NotFound:             http.StatusNotFound,
	tokenvault.Conflict:             http.StatusConflict,
	tokenvault.UnsupportedMediaType: http.StatusUnsupportedMediaType,
	tokenvault.TooLarge:             http.StatusRequestEntityTooLarge,
	tokenvault.Unprocessable:        http.StatusUnprocessableEntity,
	tokenvault.Unavailable:          http.StatusServiceUnavailable,
	tokenvault.CodeFailed:           http.StatusInternalServerError, // unless the code chose one
	tokenvault.BadGateway:           http.StatusBadGateway,
	tokenvault.RateLimited:          http.StatusTooManyRequests,
	tokenvault.StorageFull:          http.StatusInsufficientStorage,
	tokenvault.Gone:                 http.StatusGone,
}

// writeError writes err as a problem. Internal errors are logged in full and
// answered generically.
func (a *api) writeError(w http.ResponseWriter, r *http.Request, err error) {
	// An operation held to approval did not fail: it waits.
	var ar *tokenvault.ApprovalRequired
	if errors.As(err, &ar) {
		writeJSON(w, http.StatusAccepted, pendingChange{PendingChange: ar.Change, Key: ar.Key})
		return
	}
	var e *tokenvault.Error
	if !errors.As(err, &e) {
		e = &tokenvault.Error{Kind: tokenvault.Internal, Err: err}
	}
	status, ok := statusOf[e.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	if e.Kind == tokenvault.CodeFailed {
		a.writeCodeError(w, e)
		return
	}
	if e.Kind == tokenvault.RateLimited || e.Kind == tokenvault.StorageFull && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfterSeconds(e.RetryAfter))
	}
	p := Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: e.Message, Errors: e.Fields}
	if e.Kind == tokenvault.Unauthenticated {
		p.Detail = unauthenticatedDetail(r, e.Message)
	}
	p.Type = breakerProblemType(err, p.Type)
	if status == http.StatusInternalServerError {
		if e.Err != nil && r.Context().Err() == nil {
			a.logger.LogAttrs(r.Context(), slog.LevelError, "httpapi: internal error",
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", e.Err))
		}
		p.Detail = "internal error"
		p.Errors = nil
	}
	writeProblem(w, p)
}

// unauthenticatedDetail tells a caller whose key was refused where the key
// belongs: a caller who sent it as "Authorization: Bearer ..." learns that
// the header is not read.
func unauthenticatedDetail(r *http.Request, msg string) string {
	if msg == "" {
		msg = "missing, unknown or expired API key"
	}
	d := msg + "; send the API key of an application or of an authorized session in the " + APIKeyHeader + " header"
	if isOperatorPath(r) {
		d = msg + "; send the operator key in the " + APIKeyHeader + " header"
	}
	if r.Header.Get("Authorization") != "" {
		d += " (the Authorization header is not read)"
	}
	return d
}

// writeCodeError answers for tenant code that failed: with the response the
// code built (CustomHttpResponseError), or a problem with the status of its
// error class. The message is the code's own, never the host's.
func (a *api) writeCodeError(w http.ResponseWriter, e *tokenvault.Error) {
	status := e.Status
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	if e.Body != nil || e.Headers != nil {
		for k, v := range e.Headers {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		if s, ok := e.Body.(string); ok {
			w.Write([]byte(s))
		} else if e.Body != nil {
			json.NewEncoder(w).Encode(e.Body)
		}
		return
	}
	title := http.StatusText(status)
	if title == "" {
		title = "Error"
	}
	writeProblem(w, Problem{Type: tokenvault.CodeFailedProblemType, Title: title, Status: status, Detail: e.Message, Errors: e.Fields})
}

// retryAfterSeconds renders d as a Retry-After value: whole seconds,
// rounded up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	s := (d + time.Second - 1) / time.Second
	return strconv.FormatInt(max(int64(s), 1), 10)
}

func writeProblem(w http.ResponseWriter, p Problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(p)
}

// problemWriter turns the plain-text 404 and 405 answers of http.ServeMux
// into problems; the Allow header the mux sets on a 405 is kept.
type problemWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *problemWriter) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	detail := "no such route"
	if status == http.StatusMethodNotAllowed {
		detail = "method not allowed on this route"
	}
	w.Header().Del("Content-Length")
	writeProblem(w.ResponseWriter, Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail})
}

func (w *problemWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusNotFound)
	}
	return len(b), nil
}
