package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// IdempotencyKeyHeader carries the caller's idempotency key on a creating
// POST. See tokenvault.Vault.Idempotent for the rules.
const IdempotencyKeyHeader = "Idempotency-Key"

// ReplayedHeader is set to "true" on a response kept from an earlier
// request with the same idempotency key.
const ReplayedHeader = "Idempotent-Replayed"

// idempotentRoutes are the routes that create something (or, like
// regenerate, resend, rotate-data-key and rotate-fpe-key, act each time
// they are called):
// on them an Idempotency-Key header makes a repeat answer the first
// response. Other routes ignore the header. Accepting an invitation is
// not among them: it has no caller key, and its link works once anyway.
var idempotentRoutes = map[string]bool{
	"POST /applications":                                     true,
	"POST /applications/{id}/regenerate":                     true,
	"POST /tenants/self/rotate-data-key":                     true,
	"POST /tenants/self/rotate-fpe-key":                      true,
	"POST /tenants/self/invitations":                         true,
	"POST /tenants/self/invitations/{id}/resend":             true,
	"POST /tokenize":                                         true,
	"POST /tokens":                                           true,
	"POST /sessions":                                         true,
	"POST /token-intents":                                    true,
	"POST /reactor-formulas":                                 true,
	"POST /reactors":                                         true,
	"POST /reactors/{id}/react":                              true,
	"POST /proxies":                                          true,
	"POST /webhooks":                                         true,
	"POST /webhooks/{id}/rotate-secret":                      true,
	"POST /webhooks/{id}/test":                               true,
	"POST /webhooks/{id}/deliveries/{delivery_id}/redeliver": true,
	"POST /decoys":                                           true,
	// An approval that applies a change answers it once: a retry with the
	// same key gets that answer, not "approved already".
	"POST /approvals/{id}/approve": true,
	"POST /approvals/{id}/reject":  true,
}

// idempotent wraps a creating route: with an Idempotency-Key header the
// request runs through Vault.Idempotent, which the handler's whole
// response (status, headers, body) is recorded for. The request is told
// apart from another by its method, path, media type and body.
func (a *api) idempotent(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		keys := r.Header.Values(IdempotencyKeyHeader)
		if len(keys) == 0 {
			h(w, r)
			return
		}
		if len(keys) > 1 {
			a.writeError(w, r, invalid(IdempotencyKeyHeader, "must be sent once"))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.maxBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				a.writeError(w, r, decodeError(err))
				return
			}
			a.writeError(w, r, &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the body could not be read"})
			return
		}
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		req := tokenvault.IdempotentRequest{Operation: r.Method + " " + r.URL.Path + " " + mt, Body: body}
		resp, replayed, err := a.v.Idempotent(r.Context(), apiKey(r), keys[0], req,
			func(ctx context.Context) (*tokenvault.IdempotentResponse, error) {
				rec := &bufferedResponse{header: http.Header{}}
				rr := r.WithContext(ctx)
				rr.Body = io.NopCloser(bytes.NewReader(body))
				h(rec, rr)
				return rec.response(), nil
			})
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		maps.Copy(w.Header(), resp.Header)
		if replayed {
			w.Header().Set(ReplayedHeader, "true")
		}
		w.WriteHeader(resp.Status)
		w.Write(resp.Body)
	}
}

// bufferedResponse records a handler's response in memory.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedResponse) response() *tokenvault.IdempotentResponse {
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	return &tokenvault.IdempotentResponse{Status: status, Header: b.header.Clone(), Body: bytes.Clone(b.body.Bytes())}
}
