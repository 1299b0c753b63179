package tokenvault

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Who saw a token: the audit lines of the accesses to its data.
//
// Every access to a token's data is an audit line with operation "read"
// about the token (logRead, logTokenRead): a get, each token a list or a
// search returns with data, each token a detokenization inserts (into an
// answer, a proxy's request or a reactor's arguments), a deduplicated
// create. Since token:access:read those lines also record the transform
// that shaped the data and the channel it went through. The lines of one
// token are found under its own entry of the entity index (idx/log-e,
// logs.go), so an answer reads the token's lines only, whatever the log
// holds.
//
// A read that disclosed none of the data (a key whose rules redact the
// token: GetToken and Detokenize still answer, with the data left out) is
// listed too, with transform "redact": it shows who asked, and an
// auditor filters it out if only disclosures matter. Lists and searches
// never log a redacted token, so they have no such line.

// Channels: how a token's data was accessed (TokenAccess.Channel).
const (
	// ChannelGet is GET /tokens/{id} (GetToken).
	ChannelGet = "get"
	// ChannelList is a token returned by GET /tokens (ListTokens).
	ChannelList = "list"
	// ChannelSearch is a token returned by a search (SearchTokens).
	ChannelSearch = "search"
	// ChannelDetokenize is POST /detokenize (Detokenize).
	ChannelDetokenize = "detokenize"
	// ChannelProxy is a token detokenized into a proxy's request.
	ChannelProxy = "proxy"
	// ChannelReactor is a token detokenized into a reactor's arguments.
	ChannelReactor = "reactor"
	// ChannelCreate is a create (or an intent's conversion) that
	// deduplicated to the token and returned it.
	ChannelCreate = "create"
)

// MaxSubjectTokens is how many tokens one SubjectAccess request may
// cover.
const MaxSubjectTokens = 100

// TokenAccess is one access to a token's data: an audit line.
type TokenAccess struct {
	// ID is the audit line's id (GET /logs lists it too).
	ID      string `json:"id"`
	TokenID string `json:"token_id"`
	// ActorID and ActorType name who accessed it: an application, or a
	// session.
	ActorID   string `json:"actor_id,omitempty"`
	ActorType string `json:"actor_type,omitempty"`
	// ApplicationID is the application on whose authority: the actor
	// itself for an application, the private application that authorized
	// it for a session (empty on a session's lines written before
	// token:access:read).
	ApplicationID string `json:"application_id,omitempty"`
	// Channel is how: one of the Channel* constants. Lines written before
	// token:access:read have it from their message.
	Channel string `json:"channel,omitempty"`
	// Transform is what the caller was given: reveal, mask or redact.
	// Empty on lines written before token:access:read, which did not
	// record it.
	Transform string    `json:"transform,omitempty"`
	Message   string    `json:"message"`
	CreatedAt time.Time `json:"created_at"`
}

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
	pg, err := resolveAccessPage(pr)
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
		rec, err := t.loadToken(p.TenantID, id, true)
		if err != nil {
			return err
		}
		if rec == nil {
			return unit.NotFoundError("token")
		}
		lines, more, err := t.accessLines(p.TenantID, rec.Type, rec.ID, pg.Start, pg.Size)
		if err != nil {
			return err
		}
		out = &Page[TokenAccess]{}
		out.Data, out.Pagination = accessPage(lines, more, pg.Size)
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
	pg, err := resolveAccessPage(req.PageRequest)
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
		recs, err := t.subjectTokens(p.TenantID, req.Metadata)
		if err != nil {
			return err
		}
		out = &SubjectAccessPage{Tokens: make([]string, 0, len(recs))}
		var all []accessEntry
		more := false
		for _, rec := range recs {
			out.Tokens = append(out.Tokens, rec.ID)
			lines, m, err := t.accessLines(p.TenantID, rec.Type, rec.ID, pg.Start, pg.Size)
			if err != nil {
				return err
			}
			more = more || m
			all = append(all, lines...)
		}
		// Newest first across tokens: a line's suffix orders it.
		slices.SortFunc(all, func(a, b accessEntry) int { return strings.Compare(b.pos, a.pos) })
		if len(all) > pg.Size {
			all, more = all[:pg.Size], true
		}
		out.Data, out.Pagination = accessPage(all, more, pg.Size)
		return nil
	})
	return out, err
}

// resolveAccessPage resolves an access page request: by cursor only.
func resolveAccessPage(pr PageRequest) (paging.Pager, error) {
	pg, err := pr.Resolve(MaxPageSize)
	if err != nil {
		return paging.Pager{}, err
	}
	if pg.Page > 1 {
		return paging.Pager{}, unit.InvalidField("page", "access lists page by cursor: pass the previous page's after as start")
	}
	if pg.Start != "" && len(pg.Start) != auditlog.SuffixLen {
		return paging.Pager{}, unit.InvalidField("start", "is not a cursor of this list")
	}
	return pg, nil
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

// accessEntry is an access line and its position: its key suffix.
type accessEntry struct {
	pos string
	TokenAccess
}

// accessLines returns up to want access lines of token id (of type typ)
// of tenant tid created before the line suffix before ("" for the
// newest), newest first, and whether more follow: it walks the token's
// entity index back (entityPage), opening each line and keeping reads,
// want+1 entries at a time: most of a token's lines are reads, so a page
// mostly reads its size and one more.
func (t *txn) accessLines(tid, typ, id, before string, want int) ([]accessEntry, bool, error) {
	out := []accessEntry{}
	for {
		suffixes, pag, err := auditlog.EntityPage(t.Tx, tid, typ, id, nil, nil, paging.Pager{Page: 1, Size: want + 1, Start: before})
		if err != nil {
			return nil, false, err
		}
		for _, s := range suffixes {
			a, ok, err := t.accessLine(tid, s)
			if err != nil {
				return nil, false, err
			}
			if !ok {
				continue
			}
			if len(out) == want {
				return out, true, nil
			}
			out = append(out, a)
		}
		if pag.After == "" || len(suffixes) == 0 {
			return out, false, nil
		}
		before = suffixes[len(suffixes)-1]
	}
}

// accessLine opens the line at log/<suffix> of tenant tid, and returns it
// as an access if it records a read.
func (t *txn) accessLine(tid, suffix string) (accessEntry, bool, error) {
	key := barrier.Tenant(tid).Logs().Key(suffix)
	var l auditlog.LineRecord
	ok, err := t.GetRecord(key, &l)
	if err != nil || !ok || l.Operation != OpRead {
		return accessEntry{}, false, err
	}
	a := TokenAccess{
		ID: unit.KeyID(key.String()), TokenID: l.EntityID, ActorID: l.ActorID, ActorType: l.ActorType,
		ApplicationID: l.Application, Channel: l.Channel, Transform: l.Transform,
		Message: l.Message, CreatedAt: l.CreatedAt,
	}
	if a.ApplicationID == "" && a.ActorType == ActorApplication {
		a.ApplicationID = a.ActorID
	}
	if a.Channel == "" {
		a.Channel = legacyChannel(l.Message)
	}
	return accessEntry{pos: suffix, TokenAccess: a}, true, nil
}

// legacyChannel is the channel of a read line written before channels
// were recorded, from its message (the messages of logRead's callers);
// "" for one it does not know.
func legacyChannel(msg string) string {
	switch msg {
	case "Token read":
		return ChannelGet
	case "Token read (listed)":
		return ChannelList
	case "Token read (searched)":
		return ChannelSearch
	case "Token detokenized":
		return ChannelDetokenize
	case "Token used by proxy":
		return ChannelProxy
	case "Token used by reactor":
		return ChannelReactor
	case "Token read (deduplicated create)":
		return ChannelCreate
	}
	return ""
}

// accessPage makes the page of entries, more telling whether more
// follow: its pagination counts as ListLogs' does (a lower bound), and
// After is the last entry's position.
func accessPage(entries []accessEntry, more bool, size int) ([]TokenAccess, Pagination) {
	data := make([]TokenAccess, 0, len(entries))
	for _, e := range entries {
		data = append(data, e.TokenAccess)
	}
	n := len(entries)
	if more {
		n++
	}
	p := paging.Pages(n, 1, size)
	if more && len(entries) > 0 {
		p.After = paging.EncodeCursor(entries[len(entries)-1].pos)
	}
	return data, p
}

// subjectTokens returns the tokens of tenant tid whose metadata holds
// every entry of md, expired ones included, by id: found by the metadata
// index, at most MaxSubjectTokens (more is Invalid).
func (t *txn) subjectTokens(tid string, md map[string]string) ([]*tokens.Record, error) {
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	var ids []string
	first := true
	for _, k := range slices.Sorted(maps.Keys(md)) {
		found, err := t.indexedIDs(metadataIndex(ks, tid, k, md[k]))
		if err != nil {
			return nil, err
		}
		slices.Sort(found)
		if first {
			ids, first = found, false
			continue
		}
		ids = slices.DeleteFunc(ids, func(id string) bool {
			_, ok := slices.BinarySearch(found, id)
			return !ok
		})
	}
	ids = slices.Compact(ids)
	if len(ids) > MaxSubjectTokens {
		return nil, unit.InvalidField("metadata", "matches %d tokens, more than the %d one request covers: add an entry to narrow it", len(ids), MaxSubjectTokens)
	}
	var out []*tokens.Record
	for _, id := range ids {
		rec, err := t.loadToken(tid, id, true)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue
		}
		ok := true
		for k, v := range md {
			if got, has := rec.Metadata[k]; !has || !strings.EqualFold(got, v) {
				ok = false
			}
		}
		if ok {
			out = append(out, rec)
		}
	}
	return out, nil
}
