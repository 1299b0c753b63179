package tokenvault

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/store"
)

// Entity types: the values of Log.EntityType.
const (
	EntityApplication      = "application"
	EntityBank             = "bank"
	EntityCard             = "card"
	EntityProxy            = "proxy"
	EntityReactor          = "reactor"
	EntityReactorFormula   = "reactor_formula"
	EntitySession          = "session"
	EntityTenant           = "tenant"
	EntityTenantMember     = "tenant_member"
	EntityTenantInvitation = "tenant_invitation"
	EntityToken            = "token"
)

// Operations: the values of Log.Operation.
const (
	OpCreate = "create"
	OpRead   = "read"
	OpUpdate = "update"
	OpDelete = "delete"
	OpInvoke = "invoke"
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
	{"Proxy", EntityProxy},
	{"Reactor", EntityReactor},
	{"Reactor Formula", EntityReactorFormula},
	{"Session", EntitySession},
	{"Tenant", EntityTenant},
	{"Tenant Member", EntityTenantMember},
	{"Tenant Invitation", EntityTenantInvitation},
	{"Token", EntityToken},
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

// Log keys. A log line is stored at log/<nanos>/<id>, and indexed by entity
// type and by entity, so every filter is a key range scan and only the
// returned page is decrypted.
func logPrefix(tid string) string { return recordPrefix(tid, "log") }

func logTypeIndex(tid, typ string) string { return indexPrefix(tid, "log-type") + typ + "/" }

func logEntityIndex(tid, typ, id string) string {
	return indexPrefix(tid, "log-entity") + typ + "/" + id + "/"
}

// log appends a line to the tenant's audit trail, in the caller's
// transaction, so the line lands exactly when the change does.
func (t *txn) log(by actor, tid, entityType, entityID, op, msg string) error {
	l := Log{
		ID:         t.v.ids.next(t.now),
		TenantID:   tid,
		ActorID:    by.ID,
		ActorType:  by.Type,
		EntityType: entityType,
		EntityID:   entityID,
		Operation:  op,
		Message:    msg,
		CreatedAt:  t.now,
	}
	suffix := timeKey(l.CreatedAt) + "/" + l.ID
	if err := t.putRecord(logPrefix(tid)+suffix, l); err != nil {
		return err
	}
	if err := t.putIndex(logTypeIndex(tid, entityType) + suffix); err != nil {
		return err
	}
	if err := t.putIndex(logEntityIndex(tid, entityType, entityID) + suffix); err != nil {
		return err
	}
	// The line's export queue entries land with it (audit_export.go).
	return t.queueForExport(tid, suffix)
}

// ListLogs returns the caller's tenant's logs, newest first. Requires
// log:read. Reading logs is not itself logged.
func (v *Vault) ListLogs(ctx context.Context, key string, req ListLogsRequest) (*Page[Log], error) {
	pg, err := req.PageRequest.resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	if req.EntityID != "" && req.EntityType == "" {
		fe.add("entity_id", "needs entity_type")
	}
	if strings.Contains(req.EntityType, "/") {
		fe.add("entity_type", "is not an entity type")
	}
	if strings.Contains(req.EntityID, "/") {
		fe.add("entity_id", "is not an identifier")
	}
	if req.StartDate != nil && req.EndDate != nil && !req.StartDate.Before(*req.EndDate) {
		fe.add("end_date", "must be after start_date")
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	var out *Page[Log]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermLogRead)
		if err != nil {
			return err
		}
		prefix := logPrefix(p.tenantID)
		switch {
		case req.EntityID != "":
			prefix = logEntityIndex(p.tenantID, req.EntityType, req.EntityID)
		case req.EntityType != "":
			prefix = logTypeIndex(p.tenantID, req.EntityType)
		}
		var after []byte
		if req.StartDate != nil && unixNanos(*req.StartDate) > 0 {
			// Everything at or after StartDate sorts after this key.
			after = []byte(prefix + fmt.Sprintf("%016x", uint64(unixNanos(*req.StartDate)-1)) + "/~")
		}
		var end string
		if req.EndDate != nil {
			end = timeKey(*req.EndDate)
		}
		var suffixes []string
		err = t.tx.Scan([]byte(prefix), after, 0, func(k, _ []byte) error {
			s := string(k[len(prefix):])
			if end != "" && s >= end {
				return store.ErrStop
			}
			suffixes = append(suffixes, s)
			return nil
		})
		if err != nil {
			return err
		}
		slices.Reverse(suffixes)
		lo, hi, pag := pg.window(len(suffixes), func(i int) string { return suffixes[i] }, true)
		out = &Page[Log]{Pagination: pag, Data: make([]Log, 0, hi-lo)}
		for _, s := range suffixes[lo:hi] {
			var l Log
			ok, err := t.getRecord(logPrefix(p.tenantID)+s, &l)
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

// EntityTypes lists the entity types logs refer to. Requires log:read.
func (v *Vault) EntityTypes(ctx context.Context, key string) ([]EntityType, error) {
	err := v.view(ctx, func(t *txn) error {
		_, err := t.authorize(key, PermLogRead)
		return err
	})
	if err != nil {
		return nil, err
	}
	return slices.Clone(entityTypes), nil
}
