package reactors

import (
	"net/url"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/events"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The objects events carry (WebhookEventInfo.Data) about proxies, reactors
// and invocations: each an API view of the entity with everything secret
// left out (internal/events' views.go says what a view never holds, and
// how views are kept within events.MaxViewBytes). Tx.Emit builds an
// event's object only when a webhook subscribes to it, so a tenant
// without webhooks pays a cache look-up per event and no store read.

// EmitProxy emits typ about the proxy p; proxy.invoked names no entity
// id (it is about a call, not a change).
func EmitProxy(t *unit.Tx, typ string, by unit.Actor, p *Proxy) error {
	entityID := p.ID
	if typ == events.ProxyInvoked {
		entityID = ""
	}
	return t.Emit(unit.Event{TenantID: p.TenantID, Type: typ, By: by, ObjectName: "proxy", EntityType: unit.EntityProxy, EntityID: entityID, View: func() any { return proxyEventView(p) }})
}

// EmitReactor emits typ about the reactor r.
func EmitReactor(t *unit.Tx, typ string, by unit.Actor, r *Reactor) error {
	return t.Emit(unit.Event{TenantID: r.TenantID, Type: typ, By: by, ObjectName: "reactor", EntityType: unit.EntityReactor, EntityID: r.ID, View: func() any { return reactorEventView(r) }})
}

// EmitInvocation emits typ (reactor.invoked, reactor.completed or
// reactor.failed) about the invocation view of a reactor of tenant tid.
func EmitInvocation(t *unit.Tx, tid, typ string, by unit.Actor, view *InvocationEvent) error {
	return t.Emit(unit.Event{TenantID: tid, Type: typ, By: by, ObjectName: "invocation", EntityType: unit.EntityReactor, View: func() any { return view }})
}

// proxyEvent is a proxy as its events show it. Its key (which lets a
// caller invoke it, and without require_auth is all it takes), its
// configuration values (where proxies keep the destination's
// credentials), its transform code (which may embed them) and the user
// information, query and fragment of its destination URL are left out:
// the configuration's names and whether each transform is set remain.
type proxyEvent struct {
	ID                string     `json:"id"`
	TenantID          string     `json:"tenant_id"`
	Name              string     `json:"name"`
	DestinationURL    string     `json:"destination_url"`
	RequestTransform  bool       `json:"request_transform"`
	ResponseTransform bool       `json:"response_transform"`
	ApplicationID     string     `json:"application_id,omitempty"`
	ConfigurationKeys []string   `json:"configuration_keys,omitempty"`
	RequireAuth       bool       `json:"require_auth"`
	CreatedBy         string     `json:"created_by,omitempty"`
	CreatedAt         time.Time  `json:"created_at"`
	ModifiedBy        string     `json:"modified_by,omitempty"`
	ModifiedAt        *time.Time `json:"modified_at,omitempty"`
	Omitted           []string   `json:"omitted,omitempty"`
}

func proxyEventView(p *Proxy) *proxyEvent {
	e := &proxyEvent{ID: p.ID, TenantID: p.TenantID, Name: p.Name, DestinationURL: bareURL(p.DestinationURL),
		RequestTransform: p.RequestTransform != nil, ResponseTransform: p.ResponseTransform != nil,
		ConfigurationKeys: sortedKeys(p.Configuration), RequireAuth: p.RequireAuth,
		CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt, ModifiedBy: p.ModifiedBy, ModifiedAt: p.ModifiedAt}
	if p.Application != nil {
		e.ApplicationID = p.Application.ID
	}
	if len(e.ConfigurationKeys) > 0 {
		e.Omitted = events.FitView(e, []events.ViewDrop{{Name: "configuration_keys", Drop: func() { e.ConfigurationKeys = nil }}})
	}
	return e
}

// bareURL is u without user information, query and fragment, which may
// hold credentials; "" for a URL that does not parse.
func bareURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}

// sortedKeys is the names of m, sorted.
func sortedKeys(m map[string]any) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// reactorEvent is a reactor as its events show it: its code and its
// configuration's values (a reactor's configuration is how it is given
// credentials for the services its code calls) are left out; the
// configuration's names and the formula's id and name remain.
type reactorEvent struct {
	ID                string     `json:"id"`
	TenantID          string     `json:"tenant_id"`
	Name              string     `json:"name"`
	FormulaID         string     `json:"formula_id,omitempty"`
	FormulaName       string     `json:"formula_name,omitempty"`
	ApplicationID     string     `json:"application_id,omitempty"`
	ConfigurationKeys []string   `json:"configuration_keys,omitempty"`
	CreatedBy         string     `json:"created_by,omitempty"`
	CreatedAt         time.Time  `json:"created_at"`
	ModifiedBy        string     `json:"modified_by,omitempty"`
	ModifiedAt        *time.Time `json:"modified_at,omitempty"`
	Omitted           []string   `json:"omitted,omitempty"`
}

func reactorEventView(r *Reactor) *reactorEvent {
	e := &reactorEvent{ID: r.ID, TenantID: r.TenantID, Name: r.Name, ConfigurationKeys: sortedKeys(r.Configuration),
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt}
	if r.Formula != nil {
		e.FormulaID, e.FormulaName = r.Formula.ID, r.Formula.Name
	}
	if r.Application != nil {
		e.ApplicationID = r.Application.ID
	}
	if len(e.ConfigurationKeys) > 0 {
		e.Omitted = events.FitView(e, []events.ViewDrop{{Name: "configuration_keys", Drop: func() { e.ConfigurationKeys = nil }}})
	}
	return e
}

// InvocationEvent is a reactor invocation as reactor.invoked,
// reactor.completed and reactor.failed show it: never its arguments,
// its result, nor the message of the error it failed with (code may
// put detokenized values in either), only that error's status.
type InvocationEvent struct {
	ID        string `json:"id"`
	ReactorID string `json:"reactor_id"`
	// Status is "invoked", "succeeded" or "failed".
	Status string `json:"status"`
	// ErrorStatus is the HTTP status of the problem a failed invocation
	// ended with (as in the callback's error.status).
	ErrorStatus int `json:"error_status,omitempty"`
}
