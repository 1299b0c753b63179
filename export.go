package tokenvault

import (
	"context"
	"io"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/export"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Export of a tenant's tokens (docs/export.md): the exchange format's
// NDJSON, encrypted to a recipient's age public key as it is written, with
// a manifest signed by the vault's audit key. The feature is
// internal/export; this file is the API, export_run.go how an export
// runs.

// PermTokenExport allows ExportTokens and GetExport: management
// applications only (they never see the data, which leaves encrypted to
// the recipient). No other permission implies it; as every management
// permission, a tenant's full managers hold it.
const PermTokenExport = access.PermTokenExport

// ApprovalExport is the approval policy's operation for an export: held,
// an export waits for approval, then its requester runs it once
// (ExportTokensApproved).
const ApprovalExport = approvals.OpExport

// EntityExport is the audit log's entity of an export.
const EntityExport = unit.EntityExport

// The events of exports: export.completed carries the signed manifest,
// export.failed an export that failed after it began (ExportFailedView).
const (
	EventExportCompleted = events.ExportCompleted
	EventExportFailed    = events.ExportFailed
)

// ExportFailedView is the object of export.failed.
type ExportFailedView = export.FailedView

// ExportManifest says what an export holds (count, SHA-256 of its
// plaintext and ciphertext, filter, recipient, times, who), signed by the
// vault's audit key: export.Manifest. VerifyExport checks it.
type ExportManifest = export.Manifest

// ExportFilter is the filter an ExportManifest records.
type ExportFilter = export.Filter

// ExportLine is one token of the exchange format (NDJSON).
type ExportLine = export.Line

// ExportVerified is what VerifyExport checked.
type ExportVerified = export.Verified

// VerifyExport checks an export file against its manifest with the
// vault's published audit keys, and, given age identities, its decrypted
// content: see export.Verify.
var VerifyExport = export.Verify

// The errors of VerifyExport.
var (
	ErrExportSignature  = export.ErrBadSignature
	ErrExportCiphertext = export.ErrCiphertext
	ErrExportPlaintext  = export.ErrPlaintext
	ErrExportDecrypt    = export.ErrDecrypt
)

// ExportRequest asks for an export of the caller's tenant's tokens: every
// live token, or those in Container (or below it), of Type, and matching
// Query (the language of SearchTokens), together.
type ExportRequest struct {
	// Recipient is the age public key the stream is encrypted to
	// ("age1..." X25519, or "age1pq1..." post-quantum hybrid).
	Recipient string `json:"recipient"`
	Container string `json:"container,omitempty"`
	Type      string `json:"type,omitempty"`
	Query     string `json:"query,omitempty"`
	// OnStart, when set, is called with the export's id once the export
	// is authorized, before its first byte is written: an HTTP server
	// sends it as a header.
	OnStart func(exportID string) `json:"-"`
}

// ExportTokens writes the tenant's tokens selected by req to w as an age
// file encrypted to req.Recipient, holding the exchange format's NDJSON
// (one token a line, ExportLine), and returns the signed manifest, which
// is also stored (GetExport) and named by an audit line (entity export;
// the line holds the count and the manifest's digest, never data) and the
// event export.completed. The
// tokens are read in one read transaction, a consistent snapshot (see
// docs/export.md for what that holds on each store), and streamed: at
// most one token and one 64 KiB chunk are held, whatever the tenant's
// size. Expired tokens, decoys, cvcs and fingerprints are not exported.
// Requires token:export.
//
// When the tenant's approval policy holds ApprovalExport, nothing is
// written: it returns an *ApprovalRequired, and once the change is
// applied its requester runs ExportTokensApproved with the same request.
//
// Returns Invalid (a recipient that is not an age public key, a private
// key, a bad container, type or query), Unauthenticated, PermissionDenied
// (no token:export), RateLimited, *ApprovalRequired, StorageFull, and
// Internal; once writing has begun, w's error, or ctx's, ends the export
// without a manifest (an audit line records the failure).
func (v *Vault) ExportTokens(ctx context.Context, key Credential, req ExportRequest, w io.Writer) (*ExportManifest, error) {
	return v.exportTokens(ctx, key, "", req, w)
}

// ExportTokensApproved is ExportTokens of a request held to approval
// (ApprovalExport), with approvalID the id of its applied change: the
// same key, the same request (recipient and filters), once, before the
// change's expiry.
//
// Returns what ExportTokens returns (Invalid, Unauthenticated,
// PermissionDenied, RateLimited, StorageFull, Internal), and NotFound (no
// such change), PermissionDenied (another key's change), Conflict (not
// an applied export, another request, used already, expired).
func (v *Vault) ExportTokensApproved(ctx context.Context, key Credential, approvalID string, req ExportRequest, w io.Writer) (*ExportManifest, error) {
	if approvalID == "" {
		return nil, &Error{Kind: Invalid, Message: "an approval id is required"}
	}
	return v.exportTokens(ctx, key, approvalID, req, w)
}

// GetExport returns the signed manifest of export id of the caller's
// tenant. Requires token:export.
//
// Returns NotFound (no such export: also one that failed, or another
// tenant's), Unauthenticated, PermissionDenied, RateLimited, Internal.
func (v *Vault) GetExport(ctx context.Context, key Credential, id string) (*ExportManifest, error) {
	var out *ExportManifest
	err := v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenExport)
		if err != nil {
			return err
		}
		if !unit.ValidID(id) {
			return unit.NotFoundError("export")
		}
		var rec export.Record
		ok, err := t.GetRecord(export.Key(p.TenantID, id), &rec)
		if err != nil {
			return err
		}
		if !ok {
			return unit.NotFoundError("export")
		}
		out = &rec.Manifest
		return nil
	})
	return out, err
}

// TokenExporter exports tokens: a *Vault in process, or a *client.Client
// over HTTP.
type TokenExporter interface {
	ExportTokens(ctx context.Context, key Credential, req ExportRequest, w io.Writer) (*ExportManifest, error)
}
