package listing

import (
	"fmt"
	"slices"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Find is one page of the tokens matching q that p may use with perm
// (ListTokens with token:read, SearchTokens with token:search), each
// shaped by Show: walked from a list index (Page), or, with a filter
// answered by an index of exact values, read from that index (query).
func (l *Lists) Find(t *unit.Tx, p *access.Principal, perm string, q Query, pg paging.Pager) (*paging.Page[tokens.Token], error) {
	if q.Walkable() {
		return Page(l, t, p, perm, q, pg, func(rec *tokens.Record) *tokens.Token {
			return Show(p, perm, q, rec)
		})
	}
	toks, err := l.query(t, p, perm, q)
	if err != nil {
		return nil, err
	}
	return paging.Paginate(toks, pg, Position), nil
}

// Position orders tokens by creation, then id: ids are time-ordered but
// custom ids are not, and the position of a token never changes.
func Position(tok tokens.Token) string { return barrier.TimeKey(tok.CreatedAt) + "/" + tok.ID }

// query returns the live tokens matching q that p may use with perm,
// oldest first, for a query with an exact-value filter (ids, fingerprint,
// metadata, search): it reads that filter's index, and costs what the
// filter matches. A query without one is Find's walk of a list index
// (Page), never a scan: here it is an internal error.
func (l *Lists) query(t *unit.Tx, p *access.Principal, perm string, q Query) ([]tokens.Token, error) {
	tid := p.TenantID
	candidates, err := l.candidates(t, tid, q)
	if err != nil {
		return nil, err
	}
	var recs []*tokens.Record
	for _, id := range candidates {
		rec, err := l.Load(t, tid, id, false)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			recs = append(recs, rec)
		}
	}
	// Ids are time-ordered, custom ids are not: order by creation.
	slices.SortStableFunc(recs, func(a, b *tokens.Record) int { return a.CreatedAt.Compare(b.CreatedAt) })

	var out []tokens.Token
	for _, rec := range recs {
		if rec.Erased || rec.Expired(t.Now) || !q.Matches(rec) {
			continue
		}
		if tok := Show(p, perm, q, rec); tok != nil {
			tokens.NoteListed(t, rec)
			out = append(out, *tok)
		}
	}
	return out, nil
}

// Show shapes a token of a list or search for p, or returns nil when p
// may not use it with perm (Find).
func Show(p *access.Principal, perm string, q Query, rec *tokens.Record) *tokens.Token {
	transform, ok := p.Decide(perm, tokens.ScopeOf(rec))
	if !ok {
		return nil
	}
	clear := p.MayReadClear(tokens.ScopeOf(rec))
	if q.Fingerprint != "" && !clear {
		// Equality with the data is told only to a key that sees it
		// (MayReadClear): a masking reader would test guesses.
		return nil
	}
	tok := tokens.TokenOf(rec, transform)
	if !clear {
		tok.Fingerprint = ""
	}
	if perm != access.PermTokenRead && !p.MayRead(tokens.ScopeOf(rec)) {
		// Found by search alone (see "Keys learn only what they may
		// read"): a fingerprint or metadata term would test a value
		// against what the key may not read, so it matches only where
		// it may; the stored content is withheld.
		if q.ReadsContent() {
			return nil
		}
		searchView(tok)
	}
	return tok
}

// searchView is what a search shows of a token the key may find (token:search)
// but not read (token:read): its identity and placement (id, tenant, type,
// containers, expiry, deduplicate flag, timestamps, actors) and its data as
// the token:search transform shows it (the mask by default), nothing stored
// with it: no mask field, fingerprint, fingerprint expression, metadata or
// search indexes.
func searchView(tok *tokens.Token) {
	data := tok.Data
	tok.WithholdContent()
	tok.Data = data
}

// candidates are the ids, sorted, that q's exact-value filters (ids,
// fingerprint, metadata, subject, search) name in tenant tid: a superset of the
// tokens matching q, which Query.Matches narrows. An internal error for a
// query without such a filter (a walk of a list index, never a scan).
func (l *Lists) candidates(t *unit.Tx, tid string, q Query) ([]string, error) {
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
			// The indexes return sorted ids.
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
		if err := narrow(l.FingerprintIDs(t, tid, q.Fingerprint)); err != nil {
			return nil, err
		}
	}
	for k, val := range q.Metadata {
		if err := narrow(l.MetadataIDs(t, tid, k, val)); err != nil {
			return nil, err
		}
	}
	if q.Subject != "" {
		if err := narrow(tokens.IndexedIDs(t, tokens.SubjectIndex(ks, tid, q.Subject))); err != nil {
			return nil, err
		}
	}
	for _, s := range q.Search {
		if err := narrow(tokens.IndexedIDs(t, tokens.SearchIndex(ks, tid, s))); err != nil {
			return nil, err
		}
	}

	if candidates == nil {
		// Find walks a list index for such a query: never a scan.
		return nil, fmt.Errorf("tokenvault: queryTokens without an exact-value filter")
	}
	return slices.Compact(slices.Sorted(slices.Values(candidates))), nil
}
