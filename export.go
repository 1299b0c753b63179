package tokenvault

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/export"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/tokens/listing"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Export of a tenant's tokens (docs/export.md): the exchange format's
// NDJSON, encrypted to a recipient's age public key as it is written, with
// a manifest signed by the vault's audit key. The feature is
// internal/export; this file authorizes, holds to approval, walks the
// tokens in one snapshot and records the export.

// PermTokenExport allows ExportTokens: management applications only, and
// only when granted by name (a tenant's first management application
// does not hold it).
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
// the line holds the count and the manifest's digest, never data). The
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
// Returns what ExportTokens returns, and NotFound (no such change),
// PermissionDenied (another key's change), Conflict (not an applied
// export, another request, used already, expired).
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

// exportQuery is the listing query of req, or Invalid naming the field.
func exportQuery(req ExportRequest) (listing.Query, error) {
	fe := unit.FieldErrors{}
	if req.Container != "" && !validContainer(req.Container) {
		fe.Add("container", "must start and end with / and hold letters, digits, - and _ segments")
	}
	if req.Type != "" && !slices.Contains(tokens.Types, req.Type) {
		fe.Add("type", "must be one of %s", strings.Join(tokens.Types, ", "))
	}
	q, err := listing.ParseQuery(req.Query)
	if err != nil {
		return q, err
	}
	if req.Container != "" && q.Container != "" {
		fe.Add("container", "is given in the query too: give it once")
	}
	if req.Type != "" && q.Type != "" {
		fe.Add("type", "is given in the query too: give it once")
	}
	if err := fe.Err(); err != nil {
		return q, err
	}
	if req.Container != "" {
		q.Container = req.Container
	}
	if req.Type != "" {
		q.Type = req.Type
	}
	return q, nil
}

// exportDigest names an export's request in its change: the SHA-256 of
// its recipient and filters.
func exportDigest(req ExportRequest) string {
	b, _ := json.Marshal(export.Manifest{Recipient: req.Recipient, Filter: export.Filter{Container: req.Container, Type: req.Type, Query: req.Query}})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// exportView is what a held export shows its approvers: the recipient
// and the filters (no secret: a public key).
type exportView struct {
	Recipient string        `json:"recipient"`
	Filter    export.Filter `json:"filter"`
}

func (v *Vault) exportTokens(ctx context.Context, key Credential, approvalID string, req ExportRequest, w io.Writer) (*ExportManifest, error) {
	recipient, err := export.ParseRecipient(req.Recipient)
	if err != nil {
		return nil, err
	}
	q, err := exportQuery(req)
	if err != nil {
		return nil, err
	}
	filter := export.Filter{Container: req.Container, Type: req.Type, Query: req.Query}
	var (
		p       *principal
		pending *ApprovalRequired
		m       *export.Manifest
	)
	// The authorization, and the approval held or spent, in a commit of
	// its own before any byte is written.
	err = v.update(ctx, func(t *txn) error {
		pending, m = nil, nil
		if p, err = t.authorize(key, PermTokenExport); err != nil {
			return err
		}
		m = &export.Manifest{Format: export.Format, ID: v.ids.Next(t.Now), TenantID: p.TenantID, Filter: filter,
			Recipient: req.Recipient, StartedAt: t.Now.UTC(), ActorID: p.Actor().ID, ActorType: p.Actor().Type, ApprovalID: approvalID}
		digest := exportDigest(req)
		if approvalID != "" {
			return approvals.UseFor(t.Tx, approvals.OpExport, p.Actor(), p.TenantID, approvalID, digest)
		}
		pol, err := approvals.GetPolicy(t.Tx, p.TenantID)
		if err != nil || !pol.Needs(approvals.OpExport) {
			return err
		}
		pending, err = v.requestChange(t, p, pol, &approvals.Change{Operation: approvals.OpExport, Target: digest}, nil,
			exportView{Recipient: req.Recipient, Filter: filter}, changePayload{})
		return err
	})
	if err != nil {
		return nil, err
	}
	if pending != nil {
		return nil, pending
	}
	if req.OnStart != nil {
		req.OnStart(m.ID)
	}
	sums, err := v.writeExport(ctx, p.TenantID, q, recipient, w)
	if err != nil {
		v.logExportFailed(ctx, p, m, sums.Count)
		return nil, err
	}
	m.Count, m.PlaintextSize, m.PlaintextSHA256 = sums.Count, sums.PlaintextSize, sums.PlaintextSHA256
	m.CiphertextSize, m.CiphertextSHA256 = sums.CiphertextSize, sums.CiphertextSHA256
	err = v.update(ctx, func(t *txn) error {
		s, err := t.signer()
		if err != nil {
			return err
		}
		m.FinishedAt = t.Now.UTC()
		m.Sign(s.Key)
		if err := t.PutRecord(export.Key(m.TenantID, m.ID), &export.Record{Manifest: *m}); err != nil {
			return err
		}
		if err := export.EmitCompleted(t.Tx, p.Actor(), m); err != nil {
			return err
		}
		return t.Log(p.Actor(), m.TenantID, EntityExport, m.ID, OpCreate,
			fmt.Sprintf("Tokens exported: %d to %s, manifest sha256:%s", m.Count, m.Recipient, m.Digest()))
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// writeExport streams the tokens of tenant tid matching q to w, encrypted
// to recipient, in one read transaction (one snapshot of the store).
func (v *Vault) writeExport(ctx context.Context, tid string, q listing.Query, recipient export.Recipient, w io.Writer) (export.Sums, error) {
	tw, err := export.NewWriter(w, recipient)
	if err != nil {
		return export.Sums{}, err
	}
	err = v.view(ctx, func(t *txn) error {
		return v.lists.Each(t.Tx, tid, q, func(rec *tokens.Record) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if rec.Decoy {
				return nil
			}
			return tw.Write(export.LineOf(rec))
		})
	})
	if err != nil {
		return tw.Sums(), err
	}
	return tw.Close()
}

// logExportFailed records an export that ended before its manifest (the
// receiver holds a partial file that no manifest describes). Its own
// failure is only logged: the export's error is what the caller needs.
func (v *Vault) logExportFailed(ctx context.Context, p *principal, m *export.Manifest, written int64) {
	err := v.update(context.WithoutCancel(ctx), func(t *txn) error {
		if err := export.EmitFailed(t.Tx, p.Actor(), m, written); err != nil {
			return err
		}
		return t.Log(p.Actor(), m.TenantID, EntityExport, m.ID, OpCreate,
			fmt.Sprintf("Token export to %s failed after %d tokens: no manifest", m.Recipient, written))
	})
	if err != nil {
		v.logger.Error("tokenvault: recording a failed export", "export", m.ID, "err", err)
	}
}
