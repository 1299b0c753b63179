package tokenvault

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/tokens/listing"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The facade's page of token lists, searches and the access history: the
// methods authorize and call internal/tokens/listing, which owns the
// list indexes, their counts and cursors, the query language and the
// reading of the access lines.

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
// type and set of containers, merged: internal/tokens/listing) from the
// cursor and stops when
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
	q := listing.Query{IDs: req.IDs, Container: req.Container, Type: req.Type, Fingerprint: req.Fingerprint, Metadata: req.Metadata}
	var out *Page[Token]
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenRead)
		if err != nil {
			return err
		}
		if out, err = v.lists.Find(t.Tx, p, PermTokenRead, q, pg); err != nil {
			return err
		}
		return v.tokens.LogListed(t.Tx, p, PermTokenRead, out.Data, "Token read (listed)", ChannelList)
	})
	return out, err
}

// SearchTokensRequest is the body of a token search. Query is a list of
// terms joined by AND (case-insensitive), each field:value, the value in
// double quotes when it holds spaces:
//
//	data:<value>            the token has a search index with exactly this value
//	metadata.<key>:<value>  metadata entry, value compared case-insensitively
//	type:<type>             token, card or bank
//	container:<container>   in this container or one below it
//	fingerprint:<value>     this fingerprint, among tokens the key reads in clear
//	id:<id>                 this token
//
// An empty query matches every token.
type SearchTokensRequest struct {
	Query string `json:"query"`
	PageRequest
}

// SearchTokens finds tokens by their search indexes, metadata and
// attributes, without decrypting any token that does not match an exact
// index term. Results are shaped by the caller's token:search access;
// tokens it does not reach are left out. A result carries what is stored
// with the token (fingerprint, metadata, search indexes, mask,
// expressions) only if the caller may also read it (token:read; see
// listing.Show), and a metadata or fingerprint term matches only such
// tokens, as GET /tokens would list them. Requires token:search, and
// token:read for a metadata or fingerprint term.
//
// Returns Invalid for a bad query (after the permission is checked),
// Unauthenticated, PermissionDenied.
func (v *Vault) SearchTokens(ctx context.Context, key Credential, req SearchTokensRequest) (*Page[Token], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	var out *Page[Token]
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenSearch)
		if err != nil {
			return err
		}
		// After the permission: a key that may not search learns
		// nothing, not even how its query would be read.
		q, err := listing.ParseQuery(req.Query)
		if err != nil {
			return err
		}
		// As GET /tokens?metadata.k=v: finding by metadata or
		// fingerprint reads them.
		if q.ReadsContent() && !p.Has(PermTokenRead) {
			return unit.Errorf(PermissionDenied, "the key lacks the permission %s, which a metadata or fingerprint term needs", PermTokenRead)
		}
		if out, err = v.lists.Find(t.Tx, p, PermTokenSearch, q, pg); err != nil {
			return err
		}
		return v.tokens.LogListed(t.Tx, p, PermTokenSearch, out.Data, "Token read (searched)", ChannelSearch)
	})
	return out, err
}

// Channels: how a token's data was accessed (TokenAccess.Channel).
const (
	// ChannelGet is GET /tokens/{id} (GetToken).
	ChannelGet = unit.ChannelGet
	// ChannelList is a token returned by GET /tokens (ListTokens).
	ChannelList = unit.ChannelList
	// ChannelSearch is a token returned by a search (SearchTokens).
	ChannelSearch = unit.ChannelSearch
	// ChannelDetokenize is POST /detokenize (Detokenize).
	ChannelDetokenize = unit.ChannelDetokenize
	// ChannelProxy is a token detokenized into a proxy's request.
	ChannelProxy = unit.ChannelProxy
	// ChannelReactor is a token detokenized into a reactor's arguments.
	ChannelReactor = unit.ChannelReactor
	// ChannelCreate is a create (or an intent's conversion) that
	// deduplicated to the token and returned it.
	ChannelCreate = unit.ChannelCreate
)

// MaxSubjectTokens is how many tokens one SubjectAccess request may
// cover.
const MaxSubjectTokens = listing.MaxSubjectTokens

// TokenAccess is one access to a token's data: an audit line.
type TokenAccess = listing.TokenAccess

// SubjectAccessRequest names a data subject by the metadata of its
// tokens.
type SubjectAccessRequest struct {
	// Metadata holds the entries every token of the subject has (values
	// compared case-insensitively, as ListTokens does): at least one.
	Metadata map[string]string `json:"metadata"`
	PageRequest
}

// SubjectAccessPage is one page of the accesses to a subject's tokens.
type SubjectAccessPage struct {
	Pagination Pagination    `json:"pagination"`
	Data       []TokenAccess `json:"data"`
	// Tokens are the ids of the tokens the page covers: every token with
	// the metadata, at most MaxSubjectTokens.
	Tokens []string `json:"tokens"`
}

// TokenAccess lists the accesses to the data of the caller's tenant's
// token id, newest first: every get, list, search, detokenization, proxy
// or reactor call and deduplicated create that returned or sent its data,
// with actor, application, time, channel and transform. A get or
// detokenization the caller's rules redacted is listed too, with
// transform "redact": it disclosed nothing, but shows who asked. Requires
// token:access:read (management applications), and reads only the token's
// own audit lines. Pages are by cursor: Start is the previous page's
// After; Page above 1 is Invalid. TotalItems is a lower bound, as for
// logs: the lines up to the end of the page, plus one when After is set.
//
// Returns NotFound for a token that does not exist (a deleted token too:
// its lines stay in ListLogs by entity) or is another tenant's, Invalid
// for a page, size or start that is not one, Unauthenticated for
// a key that is missing, unknown or expired, RateLimited over a rate
// limit, PermissionDenied without token:access:read, or Internal.
func (v *Vault) TokenAccess(ctx context.Context, key Credential, id string) (*Page[TokenAccess], error) {
	return v.TokenAccessPage(ctx, key, id, PageRequest{})
}

// TokenAccessPage is TokenAccess for the page pr.
//
// Errors: as TokenAccess: NotFound, Invalid, Unauthenticated,
// RateLimited, PermissionDenied, Internal.
func (v *Vault) TokenAccessPage(ctx context.Context, key Credential, id string, pr PageRequest) (*Page[TokenAccess], error) {
	pg, err := listing.ResolveAccessPage(pr)
	if err != nil {
		return nil, err
	}
	if err := v.foldForAccess(ctx, key); err != nil {
		return nil, err
	}
	var out *Page[TokenAccess]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenAccessRead)
		if err != nil {
			return err
		}
		rec, err := v.tokens.Load(t.Tx, p.TenantID, id, true)
		if err != nil {
			return err
		}
		if rec == nil {
			return unit.NotFoundError("token")
		}
		lines, more, err := v.lists.AccessLines(t.Tx, p.TenantID, rec.Type, rec.ID, pg.Start, pg.Size)
		if err != nil {
			return err
		}
		out = &Page[TokenAccess]{}
		out.Data, out.Pagination = listing.AccessPage(lines, more, pg.Size)
		return nil
	})
	return out, err
}

// SubjectAccess lists, newest first, the accesses to the data of every
// token of the caller's tenant whose metadata holds each entry of
// req.Metadata (a data subject's tokens, for a GDPR Art. 15 request),
// merged, as TokenAccess lists one token's. The tokens are found by the
// metadata index, as ListTokens finds them, expired ones included; the
// page names them (Tokens). Requires token:access:read.
//
// Returns Invalid for no metadata, a key holding a control character,
// metadata that more than MaxSubjectTokens tokens have (narrow it with
// another entry), or a page, size or start that is not one;
// Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without
// token:access:read, or Internal.
func (v *Vault) SubjectAccess(ctx context.Context, key Credential, req SubjectAccessRequest) (*SubjectAccessPage, error) {
	pg, err := listing.ResolveAccessPage(req.PageRequest)
	if err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	if len(req.Metadata) == 0 {
		fe.Add("metadata", "needs at least one entry")
	}
	for k := range req.Metadata {
		if k == "" || unit.HasControl(k) {
			fe.Add("metadata", "key %q is empty or holds a control character", k)
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if err := v.foldForAccess(ctx, key); err != nil {
		return nil, err
	}
	var out *SubjectAccessPage
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenAccessRead)
		if err != nil {
			return err
		}
		recs, err := v.lists.SubjectTokens(t.Tx, p.TenantID, req.Metadata)
		if err != nil {
			return err
		}
		out = &SubjectAccessPage{Tokens: make([]string, 0, len(recs))}
		var all []listing.AccessEntry
		more := false
		for _, rec := range recs {
			out.Tokens = append(out.Tokens, rec.ID)
			lines, m, err := v.lists.AccessLines(t.Tx, p.TenantID, rec.Type, rec.ID, pg.Start, pg.Size)
			if err != nil {
				return err
			}
			more = more || m
			all = append(all, lines...)
		}
		all, more = listing.MergeAccess(all, more, pg.Size)
		out.Data, out.Pagination = listing.AccessPage(all, more, pg.Size)
		return nil
	})
	return out, err
}

// foldForAccess folds the lines appended so far (appends.go) once key is
// known to hold token:access:read, so that they are listed, as ListLogs
// does.
func (v *Vault) foldForAccess(ctx context.Context, key Credential) error {
	if !v.barrier.Appends() {
		return nil
	}
	if err := v.view(ctx, func(t *txn) error {
		_, err := t.authorize(key, PermTokenAccessRead)
		return err
	}); err != nil {
		return err
	}
	return v.foldAppends(ctx)
}

// newLists makes the Vault's token lists (Open), reading through the
// features that own what they read: a token as the token feature reads it,
// a tenant being deleted, the metadata index and the audit log's entity
// index.
func (v *Vault) newLists() *listing.Lists {
	return &listing.Lists{
		Load: func(t *unit.Tx, tid, id string, withExpired bool) (*tokens.Record, error) {
			return v.tokens.Load(t, tid, id, withExpired)
		},
		TenantDeleting: tenants.Deleting,
		MetadataIDs: func(t *unit.Tx, tid, key, value string) ([]string, error) {
			ks, err := t.TenantKeys(tid, false)
			if err != nil {
				return nil, err
			}
			return tokens.IndexedIDs(t, tokens.MetadataIndex(ks, tid, key, value))
		},
		FingerprintIDs: func(t *unit.Tx, tid, fp string) ([]string, error) {
			return tokens.FingerprintIDs(t, v.fingerprints, tid, fp)
		},
		EntityLines: func(t *unit.Tx, tid, typ, id string, pg paging.Pager) ([]string, Pagination, error) {
			return auditlog.EntityPage(t, tid, typ, id, nil, nil, pg)
		},
	}
}
