package httpapi

import (
	"net/http"
)

// subjectRoutes mounts the data subjects' routes (docs/erasure.md): the
// erasure, its certificate and the subject's access report.
func (a *api) subjectRoutes() {
	a.handle("DELETE /subjects/{id}", a.eraseSubject)
	a.handle("GET /subjects/{id}/certificate", a.subjectCertificate)
	a.handle("GET /subjects/{id}/report", a.subjectReport)
}

// eraseSubject answers the erasure certificate, 200.
func (a *api) eraseSubject(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.EraseSubject(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) subjectCertificate(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.SubjectCertificate(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) subjectReport(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.SubjectAccessReport(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

// backupSubjectKeys streams a snapshot of the subject key store, as
// backup streams the data store's (its own file: never restored with
// it, never older than the last erasure).
func (a *api) backupSubjectKeys(w http.ResponseWriter, r *http.Request) {
	a.streamSnapshot(w, r, "tokenvault-subject-keys.db", "subject key backup", a.v.BackupSubjectKeys)
}
