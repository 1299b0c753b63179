package client

import (
	"context"
	"io"
	"net/http"

	"github.com/tokenvault/tokenvault"
)

// EraseSubject is DELETE /subjects/{id}: erase the data subject and get
// the signed erasure certificate (see tokenvault.Vault.EraseSubject).
func (c *Client) EraseSubject(ctx context.Context, key tokenvault.Credential, subject string) (*tokenvault.ErasureCertificate, error) {
	var out tokenvault.ErasureCertificate
	return &out, c.do(ctx, call{method: "DELETE", path: "/subjects/" + esc(subject), key: key, out: &out})
}

// SubjectCertificate is GET /subjects/{id}/certificate: the subject's
// last erasure certificate (see tokenvault.Vault.SubjectCertificate).
func (c *Client) SubjectCertificate(ctx context.Context, key tokenvault.Credential, subject string) (*tokenvault.ErasureCertificate, error) {
	var out tokenvault.ErasureCertificate
	return &out, c.do(ctx, call{method: "GET", path: "/subjects/" + esc(subject) + "/certificate", key: key, out: &out})
}

// SubjectAccessReport is GET /subjects/{id}/report: the subject's tokens
// and the accesses to them (see tokenvault.Vault.SubjectAccessReport).
func (c *Client) SubjectAccessReport(ctx context.Context, key tokenvault.Credential, subject string) (*tokenvault.SubjectReport, error) {
	var out tokenvault.SubjectReport
	return &out, c.do(ctx, call{method: "GET", path: "/subjects/" + esc(subject) + "/report", key: key, out: &out})
}

// BackupSubjectKeys is GET /operator/backup/subject-keys: it writes a
// snapshot of the server's subject key store to w, as Backup writes the
// data store's (see tokenvault.Vault.BackupSubjectKeys).
func (c *Client) BackupSubjectKeys(ctx context.Context, operatorKey tokenvault.Credential, w io.Writer) error {
	return c.streamBackup(ctx, operatorKey, "/operator/backup/subject-keys", w)
}

// streamBackup copies the snapshot answered at path to w.
func (c *Client) streamBackup(ctx context.Context, operatorKey tokenvault.Credential, path string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if err != nil {
		return &tokenvault.Error{Kind: tokenvault.Invalid, Message: "bad request: " + err.Error()}
	}
	req.Header.Set(apiKeyHeader, string(operatorKey))
	res, err := c.stream.Do(req)
	if err != nil {
		return c.failed(ctx, "cannot be reached", err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 400 {
		return problem(res, false)
	}
	if res.StatusCode != http.StatusOK {
		return &tokenvault.Error{Kind: tokenvault.Internal, Message: "unexpected answer " + res.Status}
	}
	n, err := io.Copy(w, res.Body)
	if err == nil && res.ContentLength >= 0 && n != res.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		if ctx.Err() != nil {
			return c.failed(ctx, "", err)
		}
		return &tokenvault.Error{Kind: tokenvault.Unavailable, Message: "the backup transfer failed", Err: err}
	}
	return nil
}
