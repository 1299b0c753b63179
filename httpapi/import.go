package httpapi

import (
	"errors"
	"mime"
	"net/http"
	"strconv"

	"github.com/tokenvault/tokenvault"
)

// MaxImportBodyBytes (8 MiB) bounds the body of POST /tokens/import: a
// batch of tokenvault.MaxImportBatch lines of the exchange format, larger
// than other bodies (Options.MaxBodyBytes) because it carries a thousand
// tokens.
const MaxImportBodyBytes = 8 << 20

func (a *api) importRoutes() {
	a.handle("POST /tokens/import", a.importTokens, "first_line")
}

// importTokens reads one batch of NDJSON (application/x-ndjson, the
// exchange format), its first line numbered by the query's first_line (1
// by default) so that rejects name the caller's file lines, and answers
// the batch's summary with its rejects (never any data).
func (a *api) importTokens(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-ndjson" {
		a.writeError(w, r, &tokenvault.Error{Kind: tokenvault.UnsupportedMediaType, Message: "the body must be application/x-ndjson"})
		return
	}
	first := int64(1)
	if s := r.URL.Query().Get("first_line"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			a.writeError(w, r, invalid("first_line", "must be a whole number from 1"))
			return
		}
		first = n
	}
	batch, err := tokenvault.DecodeImportNDJSON(http.MaxBytesReader(w, r.Body, MaxImportBodyBytes), first)
	var te *tokenvault.Error
	if err != nil && !errors.As(err, &te) {
		err = decodeError(err)
	}
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.ImportTokens(r.Context(), apiKey(r), batch)
	a.reply(w, r, out, err)
}
