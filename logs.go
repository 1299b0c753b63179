package tokenvault

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Entity types: the values of Log.EntityType.
const (
	EntityApplication      = unit.EntityApplication
	EntityBank             = unit.EntityBank
	EntityCard             = unit.EntityCard
	EntityFPE              = unit.EntityFPE
	EntityProxy            = unit.EntityProxy
	EntityReactor          = unit.EntityReactor
	EntityReactorFormula   = unit.EntityReactorFormula
	EntitySession          = unit.EntitySession
	EntityTenant           = unit.EntityTenant
	EntityTenantMember     = unit.EntityTenantMember
	EntityTenantInvitation = unit.EntityTenantInvitation
	EntityToken            = unit.EntityToken
	EntityTokenIntent      = unit.EntityTokenIntent
	EntityWebhook          = unit.EntityWebhook
)

// Operations: the values of Log.Operation.
const (
	OpCreate = unit.OpCreate
	OpRead   = unit.OpRead
	OpUpdate = unit.OpUpdate
	OpDelete = unit.OpDelete
	OpInvoke = unit.OpInvoke
)

// EntityType names a kind of entity that logs refer to.
type EntityType struct {
	DisplayName string `json:"display_name"`
	Value       string `json:"value"`
}

var entityTypes = []EntityType{
	{"Application", EntityApplication},
	{"Bank", EntityBank},
	{"Card", EntityCard},
	{"Format-Preserving Encryption", EntityFPE},
	{"Proxy", EntityProxy},
	{"Reactor", EntityReactor},
	{"Reactor Formula", EntityReactorFormula},
	{"Session", EntitySession},
	{"Tenant", EntityTenant},
	{"Tenant Member", EntityTenantMember},
	{"Tenant Invitation", EntityTenantInvitation},
	{"Token", EntityToken},
	{"Token Intent", EntityTokenIntent},
	{"Webhook", EntityWebhook},
}

// Log is one line of a tenant's audit trail. Messages never hold sensitive
// values: no token data, no keys.
type Log struct {
	ID         string    `json:"id"`
	TenantID   string    `json:"tenant_id"`
	ActorID    string    `json:"actor_id,omitempty"`
	ActorType  string    `json:"actor_type,omitempty"`
	EntityType string    `json:"entity_type"`
	EntityID   string    `json:"entity_id"`
	Operation  string    `json:"operation"`
	Message    string    `json:"message"`
	CreatedAt  time.Time `json:"created_at"`
}

// ListLogsRequest filters and pages ListLogs. Zero values do not filter.
type ListLogsRequest struct {
	EntityType string
	EntityID   string
	// StartDate keeps logs created at or after it.
	StartDate *time.Time
	// EndDate keeps logs created before it.
	EndDate *time.Time
	PageRequest
}

// Log keys and index entries: internal/auditlog (keys.go).

// logRead records that p read the data of an entity, and is the one place
// that decides how reads are audited. The policy (docs/internals.md, "Decisions where
// the specification is silent"):
// a single read (get) of any resource is logged with operation "read" as
// p's tenant's line; so is every token whose data a list, search,
// detokenization or deduplicated create hands back, one line per token;
// lists of other resources, and reading the logs themselves, are not.
// Like every line, it lands in the caller's transaction: a read answer is
// never given without its line committed.
func (t *txn) logRead(p *principal, entityType, entityID, msg string) error {
	return t.Log(p.Actor(), p.TenantID, entityType, entityID, OpRead, msg)
}

// logTokenRead records, as logRead does, that p accessed the data of the
// token rec through channel (a Channel* constant), shaped by transform:
// the line TokenAccess answers, which also names, for a session, the
// application that authorized it.
func (t *txn) logTokenRead(p *principal, typ, id, msg, transform, channel string) error {
	return t.LogLine(p.TenantID, auditchain.Line{
		ActorID: p.ActorID, ActorType: p.ActorType, EntityType: typ, EntityID: id, Operation: OpRead,
		Message: msg, Transform: transform, Channel: channel, Application: p.AppID,
	})
}

// getLog reads the line stored at log/<suffix>; false when there is none.
func (t *txn) getLog(tid, suffix string) (Log, bool, error) {
	key := barrier.Tenant(tid).Logs().Key(suffix)
	var l auditlog.LineRecord
	ok, err := t.GetRecord(key, &l)
	if err != nil || !ok {
		return Log{}, false, err
	}
	return logOf(key, &l), true, nil
}

// ListLogs returns the caller's tenant's logs, newest first. Requires
// log:read. Reading logs is not itself logged.
//
// The whole log, a date range, and one entity's lines (entity_type with
// entity_id) are paged at a cost of the page's offset and its size,
// whatever the log or the entity holds: the log (logPage), or the
// entity's index entries (entityPage), is walked back from the cursor, or
// from the end of the range, through the page and one line more. A page
// number costs its offset, so (page-1)*size above 10,000 is Invalid naming
// page: deeper pages are reached with the cursor (PageRequest.Start,
// pagination.after). Their total_items is a lower bound, since lines are
// appended without a count that could be kept: the lines from the start
// of the list (on a cursor page, from the cursor) to the end of the page,
// plus one when After is set, so total_pages names one page more while
// more follow; it is exact on the last page (After empty). With
// entity_type alone (typePage), the log is walked back the same way and
// each line examined is opened to read its type: a page examines at most
// its offset, its size and 1,000 more lines (paging.ListBudget), so where the
// type is rare a page may be short, even empty, with an After that
// continues the walk (follow After until it is absent); a type with at
// most 1,000 lines is then answered from its index and counted exactly
// (on a cursor page, the lines after the cursor). Its total is otherwise
// the same lower bound.
//
// Errors: Unauthenticated, PermissionDenied (no log:read), Invalid (an entity id
// without a type, a type or id holding "/" or a control character, an end
// date not after the start date, a page, size or start that is not one).
func (v *Vault) ListLogs(ctx context.Context, key Credential, req ListLogsRequest) (*Page[Log], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	fe := unit.FieldErrors{}
	if req.EntityID != "" && req.EntityType == "" {
		fe.Add("entity_id", "needs entity_type")
	}
	// Control characters too: a zero byte is how the index packs a
	// UUID (lineIndex), and no entity type or id holds one.
	if strings.Contains(req.EntityType, "/") || unit.HasControl(req.EntityType) {
		fe.Add("entity_type", "is not an entity type")
	}
	if strings.Contains(req.EntityID, "/") || unit.HasControl(req.EntityID) {
		fe.Add("entity_id", "is not an identifier")
	}
	if req.StartDate != nil && req.EndDate != nil && !req.StartDate.Before(*req.EndDate) {
		fe.Add("end_date", "must be after start_date")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	// Every line appended so far is listed (appends.go): folded once the
	// key is known to read logs, so that no caller without it can make
	// the store commit.
	if v.barrier.Appends() {
		if err := v.view(ctx, func(t *txn) error {
			_, err := t.authorize(key, PermLogRead)
			return err
		}); err != nil {
			return nil, err
		}
		if err := v.foldAppends(ctx); err != nil {
			return nil, err
		}
	}
	var out *Page[Log]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermLogRead)
		if err != nil {
			return err
		}
		var suffixes []string
		var pag Pagination
		switch {
		case req.EntityType == "":
			suffixes, pag, err = t.logPage(p.TenantID, req.StartDate, req.EndDate, pg)
		case req.EntityID != "":
			suffixes, pag, err = t.entityPage(p.TenantID, req.EntityType, req.EntityID, req.StartDate, req.EndDate, pg)
		default:
			// The type's page opens the lines it walks: they are its data.
			var data []Log
			data, pag, err = t.typePage(p.TenantID, req.EntityType, req.StartDate, req.EndDate, pg, paging.ListBudget, paging.ListBudget)
			out = &Page[Log]{Pagination: pag, Data: data}
			return err
		}
		if err != nil {
			return err
		}
		out = &Page[Log]{Pagination: pag, Data: make([]Log, 0, len(suffixes))}
		for _, s := range suffixes {
			l, ok, err := t.getLog(p.TenantID, s)
			if err != nil {
				return err
			}
			if ok {
				out.Data = append(out.Data, l)
			}
		}
		return nil
	})
	return out, err
}

// logPageBounds returns the bounds of the suffixes of the lines a newest-
// first page pg of [start, end) may hold: logRangeBounds, with before
// lowered to pg's cursor (the page is the newest of the lines older than
// it).
func logPageBounds(start, end *time.Time, pg paging.Pager) (after, before string) {
	after, before = auditlog.RangeBounds(start, end)
	if pg.Start != "" && (before == "" || pg.Start < before) {
		before = pg.Start
	}
	return after, before
}

// logPage returns the page pg of the suffixes of tenant tid's lines
// created in [start, end), newest first, and its pagination, reading only
// the page: one backward walk of the log from the cursor (or the end of
// the range), past the page's offset, through the page and one line
// more, to know whether more follow. So a page costs its offset and its
// size, whatever the log holds; an offset is bounded by maxListOffset
// (deeper pages are reached by cursor), and the total is a lower bound:
// the lines walked, which is exact when no line follows the page (see
// ListLogs). ListLogs without an entity filter lists this way.
func (t *txn) logPage(tid string, start, end *time.Time, pg paging.Pager) ([]string, Pagination, error) {
	skip, pageNumber, err := pg.Offset("lines")
	if err != nil {
		return nil, Pagination{}, err
	}
	after, before := logPageBounds(start, end, pg)
	walked, err := auditlog.Newest(t.Tx, tid, after, before, skip+pg.Size+1)
	if err != nil {
		return nil, Pagination{}, err
	}
	p := paging.Pages(len(walked), pageNumber, pg.Size)
	lo, hi := min(skip, len(walked)), min(skip+pg.Size, len(walked))
	page := walked[lo:hi]
	if hi < len(walked) {
		p.After = paging.EncodeCursor(page[len(page)-1])
	}
	return page, p, nil
}

// EntityTypes lists the entity types logs refer to. Requires log:read.
//
// Returns Unauthenticated for a key that is missing, unknown or expired,
// RateLimited over a rate limit, PermissionDenied without log:read, or
// Internal.
func (v *Vault) EntityTypes(ctx context.Context, key Credential) ([]EntityType, error) {
	err := v.view(ctx, func(t *txn) error {
		_, err := t.authorize(key, PermLogRead)
		return err
	})
	if err != nil {
		return nil, err
	}
	return slices.Clone(entityTypes), nil
}

// logOf is the line l stored at key as ListLogs returns it.
func logOf(key barrier.Key, l *auditlog.LineRecord) Log {
	return Log{ID: unit.KeyID(key.String()), TenantID: key.Tenant(), ActorID: l.ActorID, ActorType: l.ActorType,
		EntityType: l.EntityType, EntityID: l.EntityID, Operation: l.Operation, Message: l.Message, CreatedAt: l.CreatedAt}
}
