package tokenvault

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tokenvault/tokenvault/internal/jsonpatch"
	"github.com/tokenvault/tokenvault/internal/reactors"
	"github.com/tokenvault/tokenvault/internal/tenants"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Proxy forwards requests to a destination, detokenizing {{ <token_id> }}
// expressions in their bodies and running optional JavaScript transforms.
type Proxy = reactors.Proxy

// ProxyTransform is JavaScript that rewrites a request or a response:
// module.exports = async function (req) { return {body, headers} }.
type ProxyTransform = reactors.ProxyTransform

// ProxyRequest is the body of CreateProxy and UpdateProxy. RequireAuth nil
// means true. The application may be named as Application (application:
// {id}) or as ApplicationID (application_id, the spec's name), or both
// when they agree; they are Invalid when they differ.
type ProxyRequest = reactors.ProxyRequest

func (t *txn) proxyMAC(key string) []byte {
	return t.v.sys.MAC([]byte("proxy\x00"), []byte(key))
}

// validateProxy checks req (reactors.CheckProxyRequest, under the
// outbound policy) and, in a worker, its transforms' code.
func (t *txn) validateProxy(tid string, req *ProxyRequest) (map[string]any, error) {
	conf, err := reactors.CheckProxyRequest(req, validateName, t.v.outbound.DestinationProblem)
	if err != nil {
		return nil, err
	}
	err = reactors.ProxyTransformCode(req, func(code, field string) error { return t.checkCode(tid, code, field) })
	if err != nil {
		return nil, err
	}
	return conf, nil
}

// CreateProxy creates a proxy with a new random key. Requires proxy:create.
// The application may be given as req.Application or req.ApplicationID
// (Invalid on application_id when both are given and differ); the answer
// carries both.
//
// Like every call with a key, it also returns Unauthenticated for a key that
// is missing, unknown or expired, RateLimited over a rate limit, StorageFull
// when the store's storage is full, and Internal.
func (v *Vault) CreateProxy(ctx context.Context, key Credential, req ProxyRequest) (*Proxy, error) {
	pkey := reactors.NewProxyKey()
	var out *Proxy
	err := v.updateChecked(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermProxyCreate)
		if err != nil {
			return err
		}
		conf, err := t.validateProxy(p.TenantID, &req)
		if err != nil {
			return err
		}
		if err := reactors.CheckProxyApplication(t.Tx, p.TenantID, &req, nil); err != nil {
			return err
		}
		px := &Proxy{ID: t.v.ids.Next(t.Now), TenantID: p.TenantID, Key: pkey, CreatedBy: p.ActorID, CreatedAt: t.Now}
		reactors.ApplyProxyRequest(&req, px, conf)
		rec := reactors.ProxyRecordOf(px, t.proxyMAC(pkey))
		if err := reactors.PutProxy(t.Tx, rec, true); err != nil {
			return err
		}
		out = px
		if err := reactors.EmitProxy(t.Tx, EventProxyCreated, p.Actor(), px); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityProxy, rec.ID, OpCreate, fmt.Sprintf("Proxy %q created", rec.Name))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// proxyByKey finds the proxy a proxy key names, or nil.
func (t *txn) proxyByKey(pkey string) (*reactors.ProxyRecord, error) {
	if pkey == "" || len(pkey) > maxKeyLength {
		return nil, nil
	}
	return reactors.ProxyByKey(t.Tx, t.proxyMAC(pkey), func(tid string) (bool, error) { return tenants.Deleting(t.Tx, tid) })
}

// GetProxy returns a proxy of the caller's tenant. Requires proxy:read.
//
// Returns NotFound for a proxy that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without proxy:read, or Internal.
func (v *Vault) GetProxy(ctx context.Context, key Credential, id string) (*Proxy, error) {
	var out *Proxy
	err := v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermProxyRead)
		if err != nil {
			return err
		}
		rec, err := reactors.MustProxy(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		out = reactors.ProxyOf(rec)
		return t.logRead(p, EntityProxy, id, "Proxy read")
	})
	return out, err
}

// ListProxiesRequest filters and pages ListProxies; Name works as in
// ListReactorsRequest.
type ListProxiesRequest struct {
	IDs  []string
	Name string
	PageRequest
}

// ListProxies returns the proxies of the caller's tenant, oldest first.
// Requires proxy:read.
//
// Returns Invalid for a page or size out of range or a bad cursor,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without proxy:read, or Internal.
func (v *Vault) ListProxies(ctx context.Context, key Credential, req ListProxiesRequest) (*Page[Proxy], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	if err := unit.CheckIDs("id", req.IDs); err != nil {
		return nil, err
	}
	var out *Page[Proxy]
	err = v.view(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermProxyRead)
		if err != nil {
			return err
		}
		out, err = reactors.ListProxies(t.Tx, p.TenantID, pg, reactors.ListFilter{IDs: req.IDs, Name: req.Name})
		return err
	})
	return out, err
}

// UpdateProxy replaces a proxy's settings; its key stays. Requires
// proxy:update.
//
// Returns Invalid or Unprocessable for settings or transform code that fail
// their checks (naming the field), NotFound for a proxy or application that
// is not the caller's tenant's, Unauthenticated for a key that is missing,
// unknown or expired, RateLimited over a rate limit, PermissionDenied
// without proxy:update, Unavailable when no sandbox worker checks the code
// in time, StorageFull, or Internal.
func (v *Vault) UpdateProxy(ctx context.Context, key Credential, id string, req ProxyRequest) (*Proxy, error) {
	return v.changeProxy(ctx, key, id, func(*reactors.ProxyRecord) (ProxyRequest, error) { return req, nil }, "updated")
}

// PatchProxy applies an RFC 7386 merge patch to a proxy's settings.
// Requires proxy:update. A patch naming only application or only
// application_id replaces the application whole (null removes it); naming
// both, they must agree.
//
// Returns Invalid for a patch that is not a JSON object or settings that
// fail their checks (naming the field), Unprocessable for transform code
// that fails its check, NotFound for a proxy or application that is not the
// caller's tenant's, Unauthenticated for a key that is missing, unknown or
// expired, RateLimited over a rate limit, PermissionDenied without
// proxy:update, Unavailable when no sandbox worker checks the code in time,
// StorageFull, or Internal.
func (v *Vault) PatchProxy(ctx context.Context, key Credential, id string, patch json.RawMessage) error {
	fields, err := jsonpatch.Decode(patch, "proxy", "name", "destination_url", "request_transform", "response_transform", "application", "application_id", "configuration", "require_auth")
	if err != nil {
		return err
	}
	_, err = v.changeProxy(ctx, key, id, func(rec *reactors.ProxyRecord) (ProxyRequest, error) {
		cur := ProxyRequest{Name: rec.Name, DestinationURL: rec.DestinationURL, RequestTransform: rec.RequestTransform,
			ResponseTransform: rec.ResponseTransform, Application: rec.Application, Configuration: rec.Configuration, RequireAuth: &rec.RequireAuth}
		// A patch naming the application by one field replaces it
		// whole; by both, they must agree.
		_, byRef := fields["application"]
		if _, byID := fields["application_id"]; byID && !byRef {
			cur.Application = nil
		}
		var req ProxyRequest
		return req, jsonpatch.Apply(cur, fields, &req)
	}, "patched")
	return err
}

func (v *Vault) changeProxy(ctx context.Context, key Credential, id string, next func(*reactors.ProxyRecord) (ProxyRequest, error), verb string) (*Proxy, error) {
	var out *Proxy
	err := v.updateChecked(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermProxyUpdate)
		if err != nil {
			return err
		}
		rec, err := reactors.MustProxy(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		req, err := next(rec)
		if err != nil {
			return err
		}
		conf, err := t.validateProxy(p.TenantID, &req)
		if err != nil {
			return err
		}
		if err := reactors.CheckProxyApplication(t.Tx, p.TenantID, &req, rec.Application); err != nil {
			return err
		}
		px := reactors.ProxyOf(rec)
		reactors.ApplyProxyRequest(&req, px, conf)
		now := t.Now
		px.ModifiedBy, px.ModifiedAt = p.ActorID, &now
		rec = reactors.ProxyRecordOf(px, rec.KeyHash)
		if err := reactors.PutProxy(t.Tx, rec, false); err != nil {
			return err
		}
		out = px
		if err := reactors.EmitProxy(t.Tx, EventProxyUpdated, p.Actor(), px); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityProxy, id, OpUpdate, fmt.Sprintf("Proxy %q %s", rec.Name, verb))
	})
	return out, err
}

// DeleteProxy deletes a proxy; its key stops working at once. Requires
// proxy:delete.
//
// Returns NotFound for a proxy that is not the caller's tenant's,
// Unauthenticated for a key that is missing, unknown or expired, RateLimited
// over a rate limit, PermissionDenied without proxy:delete, StorageFull, or
// Internal.
func (v *Vault) DeleteProxy(ctx context.Context, key Credential, id string) error {
	return v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermProxyDelete)
		if err != nil {
			return err
		}
		rec, err := reactors.MustProxy(t.Tx, p.TenantID, id)
		if err != nil {
			return err
		}
		if err := reactors.DeleteProxy(t.Tx, rec); err != nil {
			return err
		}
		if err := reactors.EmitProxy(t.Tx, EventProxyDeleted, p.Actor(), reactors.ProxyOf(rec)); err != nil {
			return err
		}
		return t.Log(p.Actor(), p.TenantID, EntityProxy, id, OpDelete, "Proxy deleted")
	})
}
