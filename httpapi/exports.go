package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/tokenvault/tokenvault"
)

// Exports of a tenant's tokens (tokenvault.ExportTokens, docs/export.md).
//
// POST /tokens/export streams the age file, of any size, as
// application/octet-stream; its manifest is known only at the end, so the
// answer carries the export's id in the SVC-EXPORT-ID header and the
// signed manifest is fetched afterwards with GET /exports/{id}, where it
// is stored once the stream is complete. An export that fails once
// streaming has begun (the vault's error, or the client gone) is cut off:
// the connection is aborted rather than ended cleanly, and no manifest is
// stored (GET /exports/{id} answers 404), so a receiver never takes a
// partial file for a whole one. Errors before the first byte are
// problems, as everywhere; an export the approval policy holds answers
// 202 with the pending change.
func (a *api) exportRoutes() {
	a.handle("POST /tokens/export", a.exportTokens)
	a.handle("GET /exports/{id}", a.getExport)
}

// ExportIDHeader carries, on the answer of POST /tokens/export, the id of
// the export whose manifest GET /exports/{id} returns.
const ExportIDHeader = "SVC-EXPORT-ID"

// exportWriteWindow is how long one write of an export's stream may take:
// the server's WriteTimeout bounds a whole answer, so each write moves the
// deadline on, and an export of any size streams while the client reads.
const exportWriteWindow = 2 * time.Minute

func (a *api) exportTokens(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.ExportRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	sw := &exportStream{w: w, rc: http.NewResponseController(w)}
	req.OnStart = func(id string) {
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", `attachment; filename="`+id+`.age"`)
		h.Set(ExportIDHeader, id)
	}
	var err error
	if id := r.Header.Get(ApprovalIDHeader); id != "" {
		_, err = a.v.ExportTokensApproved(r.Context(), apiKey(r), id, req, sw)
	} else {
		_, err = a.v.ExportTokens(r.Context(), apiKey(r), req, sw)
	}
	switch {
	case err == nil:
		if !sw.wrote {
			w.WriteHeader(http.StatusOK)
		}
	case !sw.wrote:
		// Nothing sent yet: an answer like any other.
		h := w.Header()
		h.Del(ExportIDHeader)
		h.Del("Content-Disposition")
		a.writeError(w, r, err)
	default:
		var e *tokenvault.Error
		if errors.As(err, &e) && e.Kind == tokenvault.Internal {
			a.logger.Error("httpapi: export failed while streaming", "err", err)
		}
		// Cut the answer off: a clean end would pass a partial file
		// for a whole one.
		panic(http.ErrAbortHandler)
	}
}

// exportStream writes an export's stream, moving the write deadline on
// before each write.
type exportStream struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	wrote bool
}

func (s *exportStream) Write(p []byte) (int, error) {
	s.wrote = true
	// Not every ResponseWriter has deadlines (a test's recorder): then
	// the server's own timeouts apply.
	_ = s.rc.SetWriteDeadline(time.Now().Add(exportWriteWindow))
	return s.w.Write(p)
}

func (a *api) getExport(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetExport(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}
