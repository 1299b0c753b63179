package tokenvault

import (
	"fmt"
	"slices"

	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/tokens/listing"
)

// logReads logs the read of every token of a page that carries data: a
// list or a search shows data as GetToken does, and is audited as it is,
// with the transform p's perm applied and the channel.
func (t *txn) logReads(p *principal, perm string, toks []Token, msg, channel string) error {
	for _, tok := range toks {
		if tok.Data == nil {
			continue // redacted: nothing of the token's data was read
		}
		transform, ok := p.Decide(perm, tokenScope{ID: tok.ID, Containers: tok.Containers})
		if !ok {
			transform = TransformRedact
		}
		if err := t.logTokenRead(p, tok.Type, tok.ID, msg, transform, channel); err != nil {
			return err
		}
		if err := tokens.EmitRead(t.Tx, p, &tok); err != nil {
			return err
		}
		t.count(TokensRead)
	}
	return nil
}

// queryTokens returns the live tokens matching q that p may use with perm,
// oldest first, for a query with an exact-value filter (ids, fingerprint,
// metadata, search): it reads that filter's index, and costs what the
// filter matches. A query without one is tokenList's walk of a list index
// (pageTokens), never a scan: here it is an internal error.
func (t *txn) queryTokens(p *principal, perm string, q listing.Query) ([]Token, error) {
	tid := p.TenantID
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	var candidates []string // nil: every token
	narrow := func(ids []string, err error) error {
		if err != nil {
			return err
		}
		if candidates == nil {
			candidates = ids
		} else {
			// indexedIDs and fingerprintIDs return sorted ids.
			candidates = slices.DeleteFunc(candidates, func(id string) bool {
				_, found := slices.BinarySearch(ids, id)
				return !found
			})
		}
		if candidates == nil {
			candidates = []string{}
		}
		return nil
	}
	if q.IDs != nil {
		candidates = slices.Compact(slices.Sorted(slices.Values(q.IDs)))
	}
	if q.Fingerprint != "" {
		if err := narrow(t.fingerprintIDs(tid, q.Fingerprint)); err != nil {
			return nil, err
		}
	}
	for k, val := range q.Metadata {
		if err := narrow(t.indexedIDs(tokens.MetadataIndex(ks, tid, k, val))); err != nil {
			return nil, err
		}
	}
	for _, s := range q.Search {
		if err := narrow(t.indexedIDs(tokens.SearchIndex(ks, tid, s))); err != nil {
			return nil, err
		}
	}

	if candidates == nil {
		// tokenList walks a list index for such a query: never a scan.
		return nil, fmt.Errorf("tokenvault: queryTokens without an exact-value filter")
	}
	var recs []*tokens.Record
	for _, id := range slices.Compact(slices.Sorted(slices.Values(candidates))) {
		rec, err := t.loadToken(tid, id, false)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			recs = append(recs, rec)
		}
	}
	// Ids are time-ordered, custom ids are not: order by creation.
	slices.SortStableFunc(recs, func(a, b *tokens.Record) int { return a.CreatedAt.Compare(b.CreatedAt) })

	var out []Token
	for _, rec := range recs {
		if rec.Expired(t.Now) || !q.Matches(rec) {
			continue
		}
		if tok := shapeListed(p, perm, q, rec); tok != nil {
			out = append(out, *tok)
		}
	}
	return out, nil
}
