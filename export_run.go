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

	"github.com/tokenvault/tokenvault/internal/approvals"
	"github.com/tokenvault/tokenvault/internal/export"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/tokens/listing"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// How an export runs (ExportTokens): the request checked, the approval
// held or spent and the key authorized in a commit of their own; the
// tokens streamed in one read transaction; the manifest signed, stored,
// logged and announced in a last commit, or the failure recorded.

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
// its recipient and filters (the JSON of exportView, fields in order).
func exportDigest(req ExportRequest) string {
	b, _ := json.Marshal(exportView{Recipient: req.Recipient, Filter: export.Filter{Container: req.Container, Type: req.Type, Query: req.Query}})
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
	// The file is whole: its manifest is recorded even when the caller
	// has gone since the last byte (an HTTP client that closed at once).
	err = v.update(context.WithoutCancel(ctx), func(t *txn) error {
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
		v.logExportFailed(ctx, p, m, sums.Count)
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
