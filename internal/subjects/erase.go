package subjects

import (
	"crypto/ed25519"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// An erasure (the root's EraseSubject) runs in three steps, so that a
// crash at any point is finished by calling it again:
//
//  1. Plan, in a view: the keys the subject's tokens name, and whether it
//     was erased before;
//  2. the key store destroys those keys and the subject's current key
//     (KeyStore.Destroy): from then on every token of the subject reads
//     Erased;
//  3. EraseBatch, in transactions of at most EraseBatchSize tokens each:
//     the erased tokens deleted (each with its audit line and event), and
//     with the last batch the signed certificate, its record, its event
//     and its chained audit line.

// EraseBatchSize is how many of a subject's tokens one transaction of an
// erasure removes.
const EraseBatchSize = 1000

// msgTokenErased is the audit message of each token an erasure removes.
const msgTokenErased = "Token erased (data subject erased)"

// Plan is what an erasure of subject in tenant tid must destroy: the
// subject's key lookup, the keys its tokens name, and whether it was
// erased before (a certificate exists).
type Plan struct {
	Lookup string
	KeyIDs []string
	Erased bool
}

// PlanErasure reads, in t, what erasing subject of tenant tid destroys.
func PlanErasure(t *unit.Tx, svc *tokens.Service, tid, subject string) (*Plan, error) {
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	p := &Plan{Lookup: Lookup(ks.MAC, subject)}
	recs, err := TokensOf(t, svc, ks, tid, subject)
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		p.KeyIDs = append(p.KeyIDs, rec.SubjectKeyID)
	}
	last, err := LatestCertificate(t, tid, p.Lookup)
	p.Erased = last != nil
	return p, err
}

// Erasure is the progress of one erasure across its transactions.
type Erasure struct {
	TenantID, Subject, Lookup string
	// Keys are the keys destroyed so far (by the key store, and named by
	// the tokens removed); Tokens how many tokens were removed.
	Keys        []string
	Tokens      int
	DestroyedAt time.Time
}

// EraseBatch removes, in t, up to EraseBatchSize of the subject's erased
// tokens as by; when none is left it writes the certificate (id id,
// signed with key), and returns it. A nil certificate means another
// batch is due. A call after a finished erasure that finds nothing more
// to remove returns the last certificate. The batch's counts are added to
// e only by Done, once t committed.
func EraseBatch(t *unit.Tx, svc *tokens.Service, by unit.Actor, e *Erasure, id string, key ed25519.PrivateKey) (*Batch, error) {
	ks, err := t.TenantKeys(e.TenantID, false)
	if err != nil {
		return nil, err
	}
	recs, err := TokensOf(t, svc, ks, e.TenantID, e.Subject)
	if err != nil {
		return nil, err
	}
	b := &Batch{}
	for _, rec := range recs {
		if !rec.Erased {
			continue // made under a key created after the destruction
		}
		if b.tokens == EraseBatchSize {
			return b, nil // the next transaction goes on
		}
		if err := svc.Delete(t, by, rec, msgTokenErased); err != nil {
			return nil, err
		}
		b.tokens++
		b.keys = append(b.keys, rec.SubjectKeyID)
	}
	keys := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(e.Keys), b.keys...))))
	if e.Tokens+b.tokens == 0 && len(keys) == 0 {
		last, err := LatestCertificate(t, e.TenantID, e.Lookup)
		if err != nil || last != nil {
			b.Certificate = last
			return b, err
		}
	}
	c := &auditchain.ErasureCertificate{
		ID: id, TenantID: e.TenantID, Subject: e.Subject, Tokens: e.Tokens + b.tokens,
		KeyIDs: keys, KeyDestruction: auditchain.KeyDestructionDeleted,
		KeysDestroyedAt: e.DestroyedAt, ErasedAt: t.Now.UTC(), ErasedBy: by.ID, ErasedByType: by.Type,
	}
	if c.KeyIDs == nil {
		c.KeyIDs = []string{}
	}
	c.Sign(key)
	if err := t.PutRecord(CertificateKey(e.TenantID, e.Lookup, c.ID), &CertificateRecord{Cert: *c}); err != nil {
		return nil, err
	}
	b.Certificate = c
	if err := t.Emit(unit.Event{TenantID: e.TenantID, Type: events.SubjectErased, By: by, ObjectName: "certificate",
		EntityType: unit.EntitySubject, EntityID: c.ID, View: func() any { return c }}); err != nil {
		return nil, err
	}
	return b, t.Log(by, e.TenantID, unit.EntitySubject, c.ID, unit.OpDelete, auditchain.ErasureMessage(c.Hash()))
}

// Batch is what one EraseBatch did: Certificate, when set, ends the
// erasure.
type Batch struct {
	Certificate *auditchain.ErasureCertificate
	tokens      int
	keys        []string
}

// Done adds a committed batch's tokens and keys to e.
func (e *Erasure) Done(b *Batch) {
	e.Tokens += b.tokens
	e.Keys = append(e.Keys, b.keys...)
}

// Erased is a certificate's destroyed keys, for ErasedKeys.
type Erased struct {
	TenantID, Lookup string
	KeyIDs           []string
}

// ErasedKeys lists, in t, the keys every erasure certificate of tenants
// tids names (the Vault's Open destroys them again in the key store).
func ErasedKeys(t *unit.Tx, tids []string) ([]Erased, error) {
	var all []Erased
	for _, tid := range tids {
		certs, err := Certificates(t, tid)
		if err != nil {
			return nil, err
		}
		for _, c := range certs {
			if len(c.Cert.KeyIDs) > 0 {
				all = append(all, Erased{tid, c.Lookup, c.Cert.KeyIDs})
			}
		}
	}
	return all, nil
}
