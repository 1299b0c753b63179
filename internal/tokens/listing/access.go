package listing

import (
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
// about the token (the tokens feature's reads): a get, each token a list
// or a search returns with data, each token a detokenization inserts
// (into an answer, a proxy's request or a reactor's arguments), a
// deduplicated create. Since token:access:read those lines also record
// the transform that shaped the data and the channel it went through
// (unit.Channel*). The lines of one token are found under its own entry
// of the entity index (internal/auditlog), so an answer reads the token's
// lines only, whatever the log holds.
//
// A read that disclosed none of the data (a key whose rules redact the
// token: GetToken and Detokenize still answer, with the data left out) is
// listed too, with transform "redact": it shows who asked, and an
// auditor filters it out if only disclosures matter. Lists and searches
// never log a redacted token, so they have no such line.

// MaxSubjectTokens is how many tokens one subject access request may
// cover (SubjectTokens).
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
	// Purpose is the purpose of access the call named (SVC-PURPOSE);
	// empty when it named none.
	Purpose string `json:"purpose,omitempty"`
}

// AccessEntry is an access line and its position: its key suffix, which
// orders the lines of every token (newest last).
type AccessEntry struct {
	Pos string
	TokenAccess
}

// ResolveAccessPage resolves an access page request: by cursor only. It
// returns Invalid naming page for a page above 1, naming start for a
// cursor that is not a line's, and what paging.Request.Resolve returns.
func ResolveAccessPage(pr paging.Request) (paging.Pager, error) {
	pg, err := pr.Resolve(paging.MaxPageSize)
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

// AccessLines returns up to want access lines of token id (of type typ)
// of tenant tid created before the line suffix before ("" for the
// newest), newest first, and whether more follow: it walks the token's
// entity index back (EntityLines), opening each line and keeping reads,
// want+1 entries at a time: most of a token's lines are reads, so a page
// mostly reads its size and one more.
func (l *Lists) AccessLines(t *unit.Tx, tid, typ, id, before string, want int) ([]AccessEntry, bool, error) {
	out := []AccessEntry{}
	for {
		suffixes, pag, err := l.EntityLines(t, tid, typ, id, paging.Pager{Page: 1, Size: want + 1, Start: before})
		if err != nil {
			return nil, false, err
		}
		for _, s := range suffixes {
			a, ok, err := accessLine(t, tid, s)
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
func accessLine(t *unit.Tx, tid, suffix string) (AccessEntry, bool, error) {
	key := barrier.Tenant(tid).Logs().Key(suffix)
	var l auditlog.LineRecord
	ok, err := t.GetRecord(key, &l)
	if err != nil || !ok || l.Operation != unit.OpRead {
		return AccessEntry{}, false, err
	}
	return AccessEntry{Pos: suffix, TokenAccess: accessOf(key, &l)}, true, nil
}

// accessOf is the access a read line at key records.
func accessOf(key barrier.Key, l *auditlog.LineRecord) TokenAccess {
	a := TokenAccess{
		ID: unit.KeyID(key.String()), TokenID: l.EntityID, ActorID: l.ActorID, ActorType: l.ActorType,
		ApplicationID: l.Application, Channel: l.Channel, Transform: l.Transform,
		Message: l.Message, CreatedAt: l.CreatedAt, Purpose: l.Purpose,
	}
	if a.ApplicationID == "" && a.ActorType == unit.ActorApplication {
		a.ApplicationID = a.ActorID
	}
	if a.Channel == "" {
		a.Channel = legacyChannel(l.Message)
	}
	return a
}

// legacyChannel is the channel of a read line written before channels
// were recorded, from its message (the messages the tokens feature's
// reads write); "" for one it does not know.
func legacyChannel(msg string) string {
	switch msg {
	case "Token read":
		return unit.ChannelGet
	case "Token read (listed)":
		return unit.ChannelList
	case "Token read (searched)":
		return unit.ChannelSearch
	case "Token detokenized":
		return unit.ChannelDetokenize
	case "Token used by proxy":
		return unit.ChannelProxy
	case "Token used by reactor":
		return unit.ChannelReactor
	case "Token read (deduplicated create)":
		return unit.ChannelCreate
	}
	return ""
}

// MergeAccess merges the access lines of several tokens (each newest
// first, as AccessLines returns them) into one list newest first, at
// most size long; more tells whether more follow (any token's, or the
// merge's own cut).
func MergeAccess(all []AccessEntry, more bool, size int) ([]AccessEntry, bool) {
	// Newest first across tokens: a line's suffix orders it.
	slices.SortFunc(all, func(a, b AccessEntry) int { return strings.Compare(b.Pos, a.Pos) })
	if len(all) > size {
		all, more = all[:size], true
	}
	return all, more
}

// AccessPage makes the page of entries, more telling whether more
// follow: its pagination counts as the audit log's lists do (a lower
// bound), and After is the last entry's position.
func AccessPage(entries []AccessEntry, more bool, size int) ([]TokenAccess, paging.Pagination) {
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
		p.After = paging.EncodeCursor(entries[len(entries)-1].Pos)
	}
	return data, p
}

// SubjectTokens returns the tokens of tenant tid whose metadata holds
// every entry of md, expired ones included, by id: found by the metadata
// index (MetadataIDs), at most MaxSubjectTokens (more is Invalid, naming
// metadata).
func (l *Lists) SubjectTokens(t *unit.Tx, tid string, md map[string]string) ([]*tokens.Record, error) {
	var ids []string
	first := true
	for _, k := range slices.Sorted(maps.Keys(md)) {
		found, err := l.MetadataIDs(t, tid, k, md[k])
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
		rec, err := l.Load(t, tid, id, true)
		if err != nil {
			return nil, err
		}
		if rec == nil || rec.Erased {
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
