package tokenvault

import (
	"context"
	"io"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/transfer"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ImportLine is one token of the exchange format (docs/transfer.md): the
// fields of the API's token object, its id and created_at kept. Number is
// its line number in the caller's file, for rejects; Problem, when set,
// rejects the line with that reason (a line the caller could not read).
type ImportLine = transfer.Line

// ImportReject is a line that was not imported: its line number and why,
// never its data.
type ImportReject = transfer.Reject

// ImportResult is what ImportTokens did with a batch.
type ImportResult = transfer.Result

// ImportBatch is one batch of ImportTokens: at most MaxImportBatch lines.
type ImportBatch struct {
	Lines []ImportLine
}

// MaxImportBatch (1,000) is how many lines one ImportTokens call takes.
const MaxImportBatch = transfer.MaxBatch

// ImportTokens creates the tokens of batch keeping their ids and
// created_at: the way to bring tokens from another vault without
// re-issuing them to the systems that hold their ids.
//
// Each line is validated as CreateToken validates a request, and created
// through the same path (fingerprint, search indexes, mask, expiry,
// containers, access rules, a "Token created" audit line and the
// token.created event each), so an imported token differs from a
// tokenized one only by its id and created_at. Its id must not carry its
// data (the id rule in docs/transfer.md: UUIDs, or up to 128 letters,
// digits and - _ . : with no run of 5 characters of the data but a card's
// BIN and last four). A live token of the same id that is the same token
// (a resumed import sending a line again) is counted Skipped; one that
// differs rejects the line ("id: exists, with other contents").
//
// A line that fails is an ImportReject with its line number and reason,
// and the rest carries on; the valid lines commit in one transaction,
// whole or not at all, with one more audit line for the batch
// ("Tokens imported: ...").
//
// Who may import: a private application's key holding token:import
// directly (not through a rule, nor a session key: choosing ids is a
// privilege), and token:create on each token's containers (a line whose
// containers it lacks is rejected).
//
// Returns Invalid for a batch of more than MaxImportBatch lines,
// PermissionDenied without token:import, and, like every call with a key,
// Unauthenticated, RateLimited, StorageFull and Internal (nothing of the
// batch is created then).
func (v *Vault) ImportTokens(ctx context.Context, key Credential, batch ImportBatch) (*ImportResult, error) {
	if len(batch.Lines) > transfer.MaxBatch {
		return nil, unit.Errorf(Invalid, "a batch may hold at most %d lines", transfer.MaxBatch)
	}
	lines := slices.Clone(batch.Lines) // the caller's lines stay as given
	for i := range lines {
		if l := &lines[i]; l.Problem == "" {
			l.Problem = reasonOf(checkImportText(l))
		}
	}
	prepared := transfer.Prepare(v.tokens, lines, v.now())
	var out *ImportResult
	err := v.updateOptimistic(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenImport)
		if err != nil {
			return err
		}
		if p.ActorType != ActorApplication || p.AppType != access.Private || !p.Covers([]string{PermTokenImport}) {
			return unit.Errorf(PermissionDenied, "only a private application's key holding %s directly may import", PermTokenImport)
		}
		out, err = prepared.Commit(t.Tx, p, v.tokens)
		return err
	})
	return out, err
}

// DecodeImportNDJSON reads a batch of the exchange format from r: one
// JSON object a line, empty lines skipped, the first line numbered
// firstLine (1 when 0). A line that does not decode is in the batch with
// its Problem, so that ImportTokens rejects it and carries on.
//
// Returns Invalid for more than MaxImportBatch lines, or a line longer
// than MaxImportLineBytes; read errors of r as they are.
func DecodeImportNDJSON(r io.Reader, firstLine int64) (ImportBatch, error) {
	lines, err := transfer.DecodeNDJSON(r, firstLine)
	return ImportBatch{Lines: lines}, err
}

// MaxImportLineBytes (1 MiB) bounds one line of the exchange format.
const MaxImportLineBytes = transfer.MaxLineBytes

// checkImportText refuses a line given in Go whose strings are not valid
// UTF-8, as CreateToken does (a decoded line was checked by its decoder).
func checkImportText(l *ImportLine) error {
	if err := jsontext.CheckGoText(l.Data, "data"); err != nil {
		return err
	}
	return jsontext.CheckGoText([]any{l.ID, l.Type, l.Metadata, l.SearchIndexes, l.FingerprintExpression, l.Mask, l.Containers, l.Subject}, "")
}

// reasonOf is a reject's reason for err ("" for nil): its first field and
// message, which never quote the value.
func reasonOf(err error) string {
	e, ok := err.(*Error)
	if !ok || err == nil {
		if err != nil {
			return "not valid text"
		}
		return ""
	}
	for path, msgs := range e.Fields {
		if len(msgs) > 0 {
			return path + ": " + msgs[0]
		}
	}
	return e.Message
}
