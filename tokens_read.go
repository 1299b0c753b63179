package tokenvault

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ListTokensRequest filters ListTokens. Filters combine with AND.
type ListTokensRequest struct {
	// IDs keeps only these tokens.
	IDs []string
	// Container keeps tokens in this container or one below it.
	Container string
	// Type keeps tokens of this type.
	Type string
	// Fingerprint keeps tokens with this fingerprint, among those the
	// key's token:read reveals (a masked or redacted token never matches
	// it: it would tell whether a guess is that token's value).
	Fingerprint string
	// Metadata keeps tokens whose metadata has each of these entries
	// (values compared case-insensitively).
	Metadata map[string]string
	PageRequest
}

// ListTokens lists the tokens of the caller's tenant that its token:read
// access reaches, oldest first, data shaped by that access. Tokens it may
// not read are left out. Requires token:read.
//
// A page costs what it returns, at any number of tokens. Without an IDs,
// Fingerprint or Metadata filter it walks the tenant's token lists (one per
// type and set of containers, merged: tokens_lists.go) from the cursor and stops when
// the page is full, examining at most the page's offset, its size and
// 1,000 more tokens: where access rules hide most tokens the page may be
// short, even empty, with an After that continues the walk. A page number
// costs its offset: (Page-1)*Size above 10,000 is Invalid, naming page;
// use Start. TotalItems is the tenant's kept count of the list when the
// key's token:read is not limited by rules and no filter but Type and
// Container is given (on a cursor page too: it counts the whole list;
// expired tokens the sweeper has not removed yet are counted; a Container
// holding tokens of the tenant's container sets past the first 256 gives
// a lower bound), and
// otherwise a lower bound: the tokens shown up to the end of the page,
// plus one when After is set. Invalid for a bad filter, page or cursor.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) ListTokens(ctx context.Context, key Credential, req ListTokensRequest) (*Page[Token], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	for i, id := range req.IDs {
		if !tokens.ValidID(id) {
			fe.Add(fmt.Sprintf("id[%d]", i), "is not a token id")
		}
	}
	if req.Container != "" && !validContainer(req.Container) {
		fe.Add("container", "must start and end with / and hold letters, digits, - and _ segments")
	}
	if req.Type != "" && !slices.Contains(tokens.Types, req.Type) {
		fe.Add("type", "must be one of %s", strings.Join(tokens.Types, ", "))
	}
	for k := range req.Metadata {
		if unit.HasControl(k) {
			fe.Add("metadata", "key %q %s", k, unit.NoControl)
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	q := tokenQuery{ids: req.IDs, container: req.Container, typ: req.Type, fingerprint: req.Fingerprint, metadata: req.Metadata}
	var out *Page[Token]
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenRead)
		if err != nil {
			return err
		}
		if out, err = t.tokenList(p, PermTokenRead, q, pg); err != nil {
			return err
		}
		return t.logReads(p, PermTokenRead, out.Data, "Token read (listed)", ChannelList)
	})
	return out, err
}

// tokenList is one page of the tokens matching q that p may use with
// perm: walked from a list index (pageTokens, tokens_lists.go), or, with a
// filter answered by an index of exact values, read from that index.
func (t *txn) tokenList(p *principal, perm string, q tokenQuery, pg paging.Pager) (*Page[Token], error) {
	if q.walkable() {
		return t.pageTokens(p, perm, q, pg)
	}
	toks, err := t.queryTokens(p, perm, q)
	if err != nil {
		return nil, err
	}
	return paging.Paginate(toks, pg, tokenPosition), nil
}

// tokenPosition orders tokens by creation, then id: ids are time-ordered
// but custom ids are not, and the position of a token never changes.
func tokenPosition(tok Token) string { return barrier.TimeKey(tok.CreatedAt) + "/" + tok.ID }

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

// tokenQuery is the filter behind ListTokens and SearchTokens. Empty fields
// do not filter.
type tokenQuery struct {
	ids         []string
	container   string
	typ         string
	fingerprint string
	metadata    map[string]string
	search      []string // exact search index values
}

// queryTokens returns the live tokens matching q that p may use with perm,
// oldest first, for a query with an exact-value filter (ids, fingerprint,
// metadata, search): it reads that filter's index, and costs what the
// filter matches. A query without one is tokenList's walk of a list index
// (pageTokens), never a scan: here it is an internal error.
func (t *txn) queryTokens(p *principal, perm string, q tokenQuery) ([]Token, error) {
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
	if q.ids != nil {
		candidates = slices.Compact(slices.Sorted(slices.Values(q.ids)))
	}
	if q.fingerprint != "" {
		if err := narrow(t.fingerprintIDs(tid, q.fingerprint)); err != nil {
			return nil, err
		}
	}
	for k, val := range q.metadata {
		if err := narrow(t.indexedIDs(tokens.MetadataIndex(ks, tid, k, val))); err != nil {
			return nil, err
		}
	}
	for _, s := range q.search {
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
		if rec.Expired(t.Now) || !q.matches(rec) {
			continue
		}
		if tok := shapeListed(p, perm, q, rec); tok != nil {
			out = append(out, *tok)
		}
	}
	return out, nil
}

// matches applies the filters that need the record itself.
func (q tokenQuery) matches(rec *tokens.Record) bool {
	if q.typ != "" && rec.Type != q.typ {
		return false
	}
	if q.fingerprint != "" && rec.Fingerprint != q.fingerprint {
		return false // the fingerprint index may name more (internal/tokens/fingerprints.go)
	}
	if q.container != "" && !slices.ContainsFunc(rec.Containers, func(c string) bool { return containerContains(q.container, c) }) {
		return false
	}
	for k, v := range q.metadata {
		if got, ok := rec.Metadata[k]; !ok || !strings.EqualFold(got, v) {
			return false
		}
	}
	return true
}
