package tokenvault

import (
	"context"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// VerifyAuditChain verifies tenant tenantID's audit chain as the store
// holds it (auditlog.Verify walks it; docs/audit-chain.md), against the
// checkpoints the store holds and the vault's audit signing keys
// (AuditKeys), and reports what is wrong, each problem at its exact
// sequence number. It links the queued lines first when this instance
// holds the linker lease or can take it (linkNow); lines another instance
// has yet to link are reported apart, as Report.Unlinked (not yet
// covered; not a problem). Report.OK is false when anything is wrong, an
// unsigned tail included (lines after the last checkpoint).
//
// What a report proves: every line linked so far is there, unaltered, in
// the order it was linked, with nothing inserted among them or removed
// (but a prefix retention removed, from a signed checkpoint on); that the
// checkpoints are the vault's signatures of that chain. It does not prove
// an order of commits across instances (the chain's order is the
// linker's: internal/auditlog/chain.go), nor anything of the lines not yet linked.
//
// Besides what auditchain.Verifier finds in any copy, a store walk
// reports: Altered at seq for a line (or, at the chain's last seq, the
// head) whose record does not open or decode, as a value flipped or
// copied from another key does not; Missing at seq for an index entry
// whose line is gone, for a line of the log whose index entry is gone
// (with its LineID), and for lines the head or a checkpoint counts past
// the last line there; Reordered at seq for an index entry naming a line
// whose own seq is another; Inserted, with the line's LineID, at the
// seq after the last chained line before it in the log's (time) order,
// for a line written since the chain began that is neither on the chain
// nor queued to be; BadCheckpoint at seq for a checkpoint record that
// does not open, or that the head names and the store lacks.
//
// It takes no key: it is a host-program (operator) operation, served over
// HTTP under /operator/.
//
// Returns NotFound for an unknown tenant (or one being deleted), and
// Internal (or StorageFull, from linking first) when the store fails: a
// damaged line is a problem in the report, never an error.
func (v *Vault) VerifyAuditChain(ctx context.Context, tenantID string) (*auditchain.Report, error) {
	if !unit.ValidID(tenantID) {
		return nil, unit.NotFoundError("tenant")
	}
	if err := v.linkNow(ctx); err != nil {
		return nil, err
	}
	return auditlog.Verify(ctx, v.work, tenantID, v.AuditKeys)
}
