package reactors

import (
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Proxies as the API shows them and as they are made: the key that routes
// to one, what a request makes of one, and its loading. The root's Vault
// methods check a request against the Vault's outbound policy and
// applications, authorize, store, log and emit.

// Proxy forwards requests to a destination, detokenizing {{ <token_id> }}
// expressions in their bodies and running optional JavaScript transforms
// (the root's Proxy).
type Proxy struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Name     string `json:"name"`
	// Key is the proxy key callers name it by (SVC-PROXY-KEY). Unlike API
	// keys it is shown on every read: it routes, it does not authorize
	// (unless RequireAuth is false).
	Key               string          `json:"key"`
	DestinationURL    string          `json:"destination_url"`
	RequestTransform  *ProxyTransform `json:"request_transform,omitempty"`
	ResponseTransform *ProxyTransform `json:"response_transform,omitempty"`
	// Application is the application whose key the transforms' client
	// uses; ApplicationID is its id again, the spec's name for it.
	Application   *Ref           `json:"application,omitempty"`
	ApplicationID string         `json:"application_id,omitempty"`
	Configuration map[string]any `json:"configuration,omitempty"`
	RequireAuth   bool           `json:"require_auth"`
	CreatedBy     string         `json:"created_by,omitempty"`
	CreatedAt     time.Time      `json:"created_at"`
	ModifiedBy    string         `json:"modified_by,omitempty"`
	ModifiedAt    *time.Time     `json:"modified_at,omitempty"`
}

// ProxyRequest is the body of CreateProxy and UpdateProxy (the root's
// ProxyRequest). RequireAuth nil means true. The application may be named
// as Application (application: {id}) or as ApplicationID (application_id,
// the spec's name), or both when they agree.
type ProxyRequest struct {
	Name              string          `json:"name"`
	DestinationURL    string          `json:"destination_url"`
	RequestTransform  *ProxyTransform `json:"request_transform,omitempty"`
	ResponseTransform *ProxyTransform `json:"response_transform,omitempty"`
	Application       *Ref            `json:"application,omitempty"`
	ApplicationID     string          `json:"application_id,omitempty"`
	Configuration     map[string]any  `json:"configuration,omitempty"`
	RequireAuth       *bool           `json:"require_auth,omitempty"`
}

// ProxyKeyPrefix starts every proxy key, so that one is told from an API
// key at a glance.
const ProxyKeyPrefix = "pxy_"

// NewProxyKey returns a new random proxy key: an API key's randomness
// under ProxyKeyPrefix.
func NewProxyKey() string { return ProxyKeyPrefix + unit.NewAPIKey()[len(unit.APIKeyPrefix):] }

// ApplyProxyRequest sets the fields of p that req (checked, with its
// configuration normalized into conf) gives.
func ApplyProxyRequest(req *ProxyRequest, p *Proxy, conf map[string]any) {
	p.Name, p.DestinationURL = req.Name, req.DestinationURL
	p.RequestTransform, p.ResponseTransform = req.RequestTransform, req.ResponseTransform
	p.Application, p.Configuration = req.Application, conf
	p.RequireAuth = req.RequireAuth == nil || *req.RequireAuth
	p.fill()
}

// fill sets the fields derived from others: ApplicationID, which records
// written before it existed lack.
func (p *Proxy) fill() {
	p.ApplicationID = ""
	if p.Application != nil {
		p.ApplicationID = p.Application.ID
	}
}

// MustProxy loads tenant tid's proxy: NotFound for none.
func MustProxy(t *unit.Tx, tid, id string) (*ProxyRecord, error) {
	if !unit.ValidID(id) {
		return nil, unit.NotFoundError("proxy")
	}
	var rec ProxyRecord
	ok, err := t.GetRecord(barrier.Tenant(tid).Record(unit.EntityProxy, id), &rec)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, unit.NotFoundError("proxy")
	}
	return &rec, nil
}

// ProxyRecordOf is the record of the API's proxy p, whose key has the
// keyed hash keyHash.
func ProxyRecordOf(p *Proxy, keyHash []byte) *ProxyRecord {
	return &ProxyRecord{ID: p.ID, TenantID: p.TenantID, Name: p.Name, Key: p.Key, DestinationURL: p.DestinationURL,
		RequestTransform: p.RequestTransform, ResponseTransform: p.ResponseTransform, Application: p.Application,
		Configuration: p.Configuration, RequireAuth: p.RequireAuth, CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt,
		ModifiedBy: p.ModifiedBy, ModifiedAt: p.ModifiedAt, KeyHash: keyHash}
}

// ProxyOf is the proxy the API shows (ApplicationID filled in).
func ProxyOf(r *ProxyRecord) *Proxy {
	p := &Proxy{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Key: r.Key, DestinationURL: r.DestinationURL,
		RequestTransform: r.RequestTransform, ResponseTransform: r.ResponseTransform, Application: r.Application,
		Configuration: r.Configuration, RequireAuth: r.RequireAuth, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
		ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt}
	p.fill()
	return p
}
