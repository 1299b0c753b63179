package tokenvault

import (
	"context"
	"io"
	"slices"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/subjects"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/tokens/listing"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Data subjects (docs/erasure.md): a token may name the person it is
// about (TokenRequest.Subject); its data is then sealed under that
// subject's own key, kept in the subject key store (Options.SubjectKeys),
// which EraseSubject destroys.

// ErasureCertificate is the signed statement of an erasure
// (auditchain.ErasureCertificate): verify it with
// auditchain.VerifyCertificate and the keys of AuditKeys.
type ErasureCertificate = auditchain.ErasureCertificate

// ErrNoSubjectKeys is the Unavailable error of a subject's token, or an
// erasure, on a vault opened without Options.SubjectKeys.
var ErrNoSubjectKeys = tokens.ErrNoSubjectKeys

// EraseSubject erases the data subject of the caller's tenant: it
// destroys the subject's data keys in the subject key store (deleted, not
// flagged), so that every token of the subject is unreadable at once, in
// every copy of the data store, a backup taken before included (a read
// of such a copy is Gone); then removes the subject's tokens (each with
// its audit line and token.deleted event) and returns the erasure
// certificate, signed with the vault's audit signing key and chained in
// the audit log (a line of entity type "subject", entity id the
// certificate's id, naming its hash). Requires subject:erase (management
// applications).
//
// The key is destroyed before the certificate is written: a crash
// between the two leaves the tokens unreadable, and calling again
// finishes the erasure. A call that finds nothing left to erase (no key,
// no token) returns the subject's last certificate, so that a repeat is
// harmless. A subject the tenant holds nothing of and never erased is
// NotFound (the same answer whatever other tenants hold). A token of the subject created after the keys were
// destroyed (under a new key) is not erased by this call.
//
// Returns Invalid for a subject that is not one (TokenRequest.Subject),
// NotFound for a subject the tenant holds nothing of, Unavailable
// without a subject key store (for a subject with tokens), Unauthenticated,
// RateLimited, PermissionDenied without subject:erase, StorageFull, or
// Internal.
func (v *Vault) EraseSubject(ctx context.Context, key Credential, subject string) (*ErasureCertificate, error) {
	if err := checkSubject(subject); err != nil {
		return nil, err
	}
	var tid string
	var plan *subjects.Plan
	err := v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermSubjectErase)
		if err != nil {
			return err
		}
		tid = p.TenantID
		plan, err = subjects.PlanErasure(t.Tx, v.tokens, tid, subject)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(plan.KeyIDs) == 0 && !plan.Erased {
		held := false
		if v.subjectKeys != nil {
			if held, err = v.subjectKeys.Has(ctx, tid, plan.Lookup); err != nil {
				return nil, v.result(err)
			}
		}
		if !held {
			return nil, unit.NotFoundError("data subject")
		}
	}
	if v.subjectKeys == nil {
		return nil, ErrNoSubjectKeys
	}
	destroyed, err := v.subjectKeys.Destroy(ctx, tid, plan.Lookup, plan.KeyIDs)
	if err != nil {
		return nil, v.result(err)
	}
	e := &subjects.Erasure{TenantID: tid, Subject: subject, Lookup: plan.Lookup, Keys: slices.Clone(destroyed), DestroyedAt: v.now().UTC()}
	for {
		var b *subjects.Batch
		err := v.update(ctx, func(t *txn) error {
			p, err := t.authorize(key, PermSubjectErase)
			if err != nil {
				return err
			}
			if p.TenantID != tid {
				return unit.Errorf(unit.Conflict, "the key's tenant changed during the erasure")
			}
			s, err := t.signer()
			if err != nil {
				return err
			}
			b, err = subjects.EraseBatch(t.Tx, v.tokens, p.Actor(), e, v.ids.Next(t.Now), s.Key)
			return err
		})
		if err != nil {
			return nil, err
		}
		if b.Certificate != nil {
			return b.Certificate, nil
		}
		e.Done(b)
	}
}

// SubjectCertificate returns the last erasure certificate of the data
// subject of the caller's tenant, as EraseSubject returned it. Requires
// subject:erase or log:read (management applications).
//
// Returns NotFound for a subject never erased, Invalid for a subject that
// is not one, Unauthenticated, RateLimited, PermissionDenied, or
// Internal.
func (v *Vault) SubjectCertificate(ctx context.Context, key Credential, subject string) (*ErasureCertificate, error) {
	if err := checkSubject(subject); err != nil {
		return nil, err
	}
	var out *ErasureCertificate
	err := v.view(ctx, func(t *txn) error {
		p, err := t.authenticate(key)
		if err != nil {
			return err
		}
		if !p.Has(PermSubjectErase) && !p.Has(PermLogRead) {
			return unit.Forbidden(PermSubjectErase)
		}
		ks, err := t.TenantKeys(p.TenantID, false)
		if err != nil {
			return err
		}
		out, err = subjects.LatestCertificate(t.Tx, p.TenantID, subjects.Lookup(ks.MAC, subject))
		if err == nil && out == nil {
			err = unit.NotFoundError("erasure certificate")
		}
		return err
	})
	return out, err
}

// SubjectReport is the access report of a data subject (GDPR Art. 15):
// its tokens and every access to their data.
type SubjectReport struct {
	Subject string `json:"subject"`
	// Tokens are the subject's live tokens, each as the caller's
	// token:read rules show it: revealed, masked or redacted, and the
	// read logged as GetToken logs it; without token:read on a token,
	// only its identity, placement and times.
	Tokens []Token `json:"tokens"`
	// Accesses are the accesses to the data of those tokens, newest
	// first (TokenAccess), when the caller holds token:access:read;
	// else nil. At most MaxSubjectReportAccesses.
	Accesses []TokenAccess `json:"accesses"`
	// AccessesTruncated is set when more accesses exist than the report
	// holds: page them per token with TokenAccessPage.
	AccessesTruncated bool `json:"accesses_truncated,omitempty"`
	// LastErasure is the subject's last erasure certificate, when it
	// was erased before (a token made since is under a new key).
	LastErasure *ErasureCertificate `json:"last_erasure,omitempty"`
}

// MaxSubjectReportAccesses bounds the accesses one SubjectReport holds.
const MaxSubjectReportAccesses = 1000

// SubjectAccessReport returns the access report of the data subject of
// the caller's tenant: every live token naming it (TokenRequest.Subject;
// at most MaxSubjectTokens) and the accesses to them. The caller needs
// token:read (the tokens' data, as its rules allow) or
// token:access:read (the accesses); with neither it is PermissionDenied.
// Each token whose data the report shows is logged as a read.
//
// Returns Invalid for a subject that is not one or more than
// MaxSubjectTokens tokens, NotFound for a subject the tenant holds no
// token of and never erased, Unavailable when the subject's tokens need a
// subject key store the vault lacks, Unauthenticated, RateLimited,
// PermissionDenied, or Internal.
func (v *Vault) SubjectAccessReport(ctx context.Context, key Credential, subject string) (*SubjectReport, error) {
	if err := checkSubject(subject); err != nil {
		return nil, err
	}
	// The read lines appended so far are folded for a key that lists
	// accesses, as TokenAccess does.
	if err := v.foldForAccess(ctx, key); err != nil && unit.ErrorKind(err) != unit.PermissionDenied {
		return nil, err
	}
	var out *SubjectReport
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authenticate(key)
		if err != nil {
			return err
		}
		reads, audits := p.Has(PermTokenRead), p.Has(PermTokenAccessRead)
		if !reads && !audits {
			return unit.Forbidden(PermTokenAccessRead)
		}
		ks, err := t.TenantKeys(p.TenantID, false)
		if err != nil {
			return err
		}
		recs, err := subjects.TokensOf(t.Tx, v.tokens, ks, p.TenantID, subject)
		if err != nil {
			return err
		}
		if len(recs) > MaxSubjectTokens {
			return unit.InvalidField("subject", "has %d tokens, more than the %d one report covers", len(recs), MaxSubjectTokens)
		}
		out = &SubjectReport{Subject: subject, Tokens: []Token{}}
		var all []listing.AccessEntry
		more := false
		for _, rec := range recs {
			if rec.Erased || rec.Expired(t.Now) {
				continue
			}
			tok := tokens.Present(p, rec, access.PermTokenRead, tokens.PresentUpdated)
			if p.MayRead(tokens.ScopeOf(rec)) {
				if tok, err = v.tokens.Get(t.Tx, p, rec.ID); err != nil {
					return err
				}
			} else {
				tok.Data, tok.Mask = nil, nil
			}
			out.Tokens = append(out.Tokens, *tok)
			if audits {
				lines, m, err := v.lists.AccessLines(t.Tx, p.TenantID, rec.Type, rec.ID, "", MaxSubjectReportAccesses)
				if err != nil {
					return err
				}
				more = more || m
				all = append(all, lines...)
			}
		}
		if audits {
			all, more = listing.MergeAccess(all, more, MaxSubjectReportAccesses)
			out.Accesses, out.AccessesTruncated = make([]TokenAccess, 0, len(all)), more
			for _, e := range all {
				out.Accesses = append(out.Accesses, e.TokenAccess)
			}
		}
		out.LastErasure, err = subjects.LatestCertificate(t.Tx, p.TenantID, subjects.Lookup(ks.MAC, subject))
		if err == nil && len(recs) == 0 && out.LastErasure == nil {
			err = unit.NotFoundError("data subject")
		}
		return err
	})
	return out, err
}

// BackupSubjectKeys writes a snapshot of the subject key store
// (Options.SubjectKeys) to w: a backup of its own, never to be restored
// older than the last erasure (docs/erasure.md). It takes no API key:
// it is the host's (the server's operator endpoint authorizes it).
//
// Returns Unavailable without a subject key store, ErrNoSnapshot for a
// store that cannot snapshot, or Internal.
func (v *Vault) BackupSubjectKeys(ctx context.Context, w io.Writer) error {
	if v.subjectKeys == nil {
		return ErrNoSubjectKeys
	}
	ok, err := v.subjectKeys.Backup(ctx, w)
	if !ok {
		return ErrNoSnapshot
	}
	if err != nil {
		return v.result(err)
	}
	return nil
}

// checkSubject is Invalid, naming subject, for one that is not a subject.
func checkSubject(subject string) error {
	fe := unit.FieldErrors{}
	tokens.ValidateSubject(subject, "subject", fe)
	return fe.Err()
}

// reapplyErasures destroys again, in the subject key store, every key
// an erasure certificate of the data store names (Open): a subject key
// store restored from a backup older than an erasure does not bring the
// erased subjects back, as long as the data store holds the
// certificate. It returns how many keys it destroyed.
func (v *Vault) reapplyErasures(ctx context.Context) (int, error) {
	if v.subjectKeys == nil {
		return 0, nil
	}
	var all []subjects.Erased
	err := v.view(ctx, func(t *txn) error {
		var tids []string
		if err := t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
			tids = append(tids, tid)
			return nil
		}); err != nil {
			return err
		}
		var err error
		all, err = subjects.ErasedKeys(t.Tx, tids)
		return err
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range all {
		d, err := v.subjectKeys.DestroyIDs(ctx, e.TenantID, e.Lookup, e.KeyIDs)
		if err != nil {
			return n, err
		}
		n += len(d)
	}
	return n, nil
}
