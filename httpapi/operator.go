package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault"
)

// MinOperatorKeyLength is the shortest Options.OperatorKey New accepts.
const MinOperatorKeyLength = 16

// operatorPrefix is where the operator API lives.
const operatorPrefix = "/operator/"

// operatorRoutes mounts the operator API, only when an operator key is
// set: otherwise /operator/ is unknown, and the mux's 405 with its Allow
// header would tell a caller which operator routes exist.
func (a *api) operatorRoutes() {
	if a.operatorHash == nil {
		return
	}
	a.handle("POST /operator/tenants", a.operator(a.createTenant))
	a.handle("GET /operator/tenants", a.operator(a.listTenants), list()...)
	a.handle("GET /operator/tenants/{id}", a.operator(a.getTenantByID))
	a.handle("DELETE /operator/tenants/{id}", a.operator(a.deleteTenant))
	a.handle("GET /operator/backup", a.operator(a.backup))
	a.handle("POST /operator/tenants/{id}/audit/verify", a.operator(a.verifyAuditChain))
	a.handle("POST /operator/audit/keys/rotate", a.operator(a.rotateAuditKey))
	a.handle("POST /operator/tenants/{id}/audit/checkpoints", a.operator(a.signAuditChain))
	a.handle("GET /operator/backup/subject-keys", a.operator(a.backupSubjectKeys))
}

// setOperatorKey keeps the SHA-256 of key, never key itself.
func (a *api) setOperatorKey(key string) {
	if key == "" {
		return
	}
	if len(key) < MinOperatorKeyLength {
		panic(fmt.Sprintf("httpapi: Options.OperatorKey must be at least %d characters", MinOperatorKeyLength))
	}
	sum := sha256.Sum256([]byte(key))
	a.operatorHash = &sum
}

// operator guards an operator route (mounted only with an operator key):
// the SVC-API-KEY header must hold the operator key (else 401, counted by
// the Vault as a failed authentication of the client's address).
func (a *api) operator(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := a.v.AuthenticateOperator(r.Context(), func() bool {
			sum := sha256.Sum256([]byte(apiKey(r)))
			return subtle.ConstantTimeCompare(sum[:], a.operatorHash[:]) == 1
		})
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		h(w, r)
	}
}

// createTenantBody is the body of POST /operator/tenants: a
// tokenvault.CreateTenantRequest whose owner id is not the caller's to
// choose, so that sending one is refused as an unknown field.
type createTenantBody struct {
	Name  string `json:"name"`
	Owner struct {
		Email     string `json:"email"`
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
		Picture   string `json:"picture"`
	} `json:"owner"`
	ApplicationName string `json:"application_name"`
}

func (a *api) createTenant(w http.ResponseWriter, r *http.Request) {
	var body createTenantBody
	if err := a.decodeJSON(w, r, &body); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.CreateTenant(r.Context(), tokenvault.CreateTenantRequest{
		Name:            body.Name,
		Owner:           tokenvault.User{Email: body.Owner.Email, FirstName: body.Owner.FirstName, LastName: body.Owner.LastName, Picture: body.Owner.Picture},
		ApplicationName: body.ApplicationName,
	})
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (a *api) listTenants(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.ListTenants(r.Context(), page)
	a.reply(w, r, out, err)
}

func (a *api) getTenantByID(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetTenantByID(r.Context(), r.PathValue("id"))
	a.reply(w, r, out, err)
}

// verifyAuditChain answers the report of a walk of the tenant's audit
// chain (tokenvault.Vault.VerifyAuditChain): 200 whether or not the chain
// is sound (the report's ok says), 404 for an unknown tenant.
func (a *api) verifyAuditChain(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.VerifyAuditChain(r.Context(), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) deleteTenant(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteTenant(r.Context(), r.PathValue("id")))
}

// backup streams a snapshot of the store. Until its first byte the answer
// can still be a problem (422 for a store that cannot snapshot); a failure
// after it aborts the connection, so the client sees a broken transfer,
// never a short file answered 200 in full.
//
// A large store takes longer to copy than a server's WriteTimeout may
// allow, so the write deadline of this response is lifted (where the
// ResponseWriter lets http.ResponseController reach the connection); the
// client, and its context, bound the transfer instead.
func (a *api) backup(w http.ResponseWriter, r *http.Request) {
	a.streamSnapshot(w, r, "", "backup", a.v.Backup)
}

// streamSnapshot streams what snapshot writes (backup's and
// backupSubjectKeys's way), as the file filename ("" for the default),
// what naming it in the log.
func (a *api) streamSnapshot(w http.ResponseWriter, r *http.Request, filename, what string, snapshot func(context.Context, io.Writer) error) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	sw := &streamWriter{w: w, filename: filename}
	err := snapshot(r.Context(), sw)
	if err == nil {
		if !sw.started {
			sw.start()
		}
		return
	}
	if !sw.started {
		a.writeError(w, r, err)
		return
	}
	if r.Context().Err() == nil {
		a.logger.Error("httpapi: "+what+" failed after it started; connection aborted", "err", err)
	}
	panic(http.ErrAbortHandler)
}

// streamWriter sends the backup's headers before its first byte.
type streamWriter struct {
	w       http.ResponseWriter
	started bool
	// filename is the attachment's name; empty: tokenvault-backup.db.
	filename string
}

func (s *streamWriter) start() {
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "application/octet-stream")
	name := s.filename
	if name == "" {
		name = "tokenvault-backup.db"
	}
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	s.w.WriteHeader(http.StatusOK)
}

func (s *streamWriter) Write(p []byte) (int, error) {
	if !s.started {
		s.start()
	}
	return s.w.Write(p)
}

// isOperatorPath reports whether r is for the operator API.
func isOperatorPath(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, operatorPrefix) }
