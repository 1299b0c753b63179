package reactors

import (
	"encoding/binary"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a proxy (ProxyRecord), at tenant/<tid>/proxy/<id>.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  1 request_transform, 2 response_transform,
//	               4 application, 8 require_auth, 16 modified_at
//	str   name
//	str   key              the proxy key (sealed with the record; it
//	                       routes, and is shown on every read)
//	str   destination_url
//	str   request code     (flag 1)
//	str   response code    (flag 2)
//	str   application id   (flag 4)
//	json  configuration
//	time  created_at
//	str   created_by
//	time  modified_at      (flag 16)
//	str   modified_by
//	bytes key_hash         the keyed hash of the key, for its lookup
//
// The tenant and id are the store key's; application_id is the
// application's id again, derived (Proxy.fill). Version 0 is the JSON of
// the API's Proxy with key_hash the Vault stored before (ProxyRecordV0);
// it still reads, and a proxy in it is written in version 1 on its next
// write and by the re-seal pass.
const ProxyFormat = 1

const (
	proxyRequestTransform = 1 << iota
	proxyResponseTransform
	proxyApplication
	proxyRequireAuth
	proxyModified
)

// ProxyRecord is a proxy as stored; the key is sealed with the record and
// looked up by its keyed hash.
type ProxyRecord struct {
	ID                string
	TenantID          string
	Name              string
	Key               string
	DestinationURL    string
	RequestTransform  *ProxyTransform
	ResponseTransform *ProxyTransform
	Application       *Ref
	Configuration     map[string]any
	RequireAuth       bool
	CreatedBy         string
	CreatedAt         time.Time
	ModifiedBy        string
	ModifiedAt        *time.Time
	KeyHash           []byte
}

func (r *ProxyRecord) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if err := unit.BelongsAt(key, unit.EntityProxy, r.TenantID, r.ID); err != nil {
		return b, err
	}
	if err := unit.CheckRecordTimes("proxy", &r.CreatedAt, r.ModifiedAt); err != nil {
		return b, err
	}
	var flags uint64
	if r.RequestTransform != nil {
		flags |= proxyRequestTransform
	}
	if r.ResponseTransform != nil {
		flags |= proxyResponseTransform
	}
	if r.Application != nil {
		flags |= proxyApplication
	}
	if r.RequireAuth {
		flags |= proxyRequireAuth
	}
	if r.ModifiedAt != nil {
		flags |= proxyModified
	}
	b = binary.AppendUvarint(append(b, ProxyFormat), flags)
	b = unit.AppendStr(unit.AppendStr(unit.AppendStr(b, r.Name), r.Key), r.DestinationURL)
	if r.RequestTransform != nil {
		b = unit.AppendStr(b, r.RequestTransform.Code)
	}
	if r.ResponseTransform != nil {
		b = unit.AppendStr(b, r.ResponseTransform.Code)
	}
	if r.Application != nil {
		b = unit.AppendStr(b, r.Application.ID)
	}
	b, err := unit.AppendJSON(b, r.Configuration)
	if err != nil {
		return b, err
	}
	b = unit.AppendStr(unit.AppendTime(b, r.CreatedAt), r.CreatedBy)
	if r.ModifiedAt != nil {
		b = unit.AppendTime(b, *r.ModifiedAt)
	}
	return unit.AppendBytes(unit.AppendStr(b, r.ModifiedBy), r.KeyHash), nil
}

func (r *ProxyRecord) DecodeRecord(key barrier.Key, b []byte) error {
	if unit.IsJSONV0(b) {
		var v ProxyRecordV0
		if err := unit.DecodeJSONV0(b, &v, "proxy"); err != nil {
			return err
		}
		*r = ProxyRecord{Name: v.Name, Key: v.Key, DestinationURL: v.DestinationURL,
			RequestTransform: v.RequestTransform, ResponseTransform: v.ResponseTransform, Application: v.Application,
			Configuration: v.Configuration, RequireAuth: v.RequireAuth, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt,
			ModifiedBy: v.ModifiedBy, ModifiedAt: v.ModifiedAt, KeyHash: v.KeyHash}
		if len(r.KeyHash) == 0 {
			r.KeyHash = nil
		}
		r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
		return nil
	}
	d, err := unit.BinaryRecord(b, ProxyFormat, "proxy")
	if err != nil {
		return err
	}
	*r = ProxyRecord{ID: unit.KeyID(key.String()), TenantID: key.Tenant()}
	flags := d.Uvarint()
	r.Name, r.Key, r.DestinationURL = d.Str(), d.Str(), d.Str()
	if flags&proxyRequestTransform != 0 {
		r.RequestTransform = &ProxyTransform{Code: d.Str()}
	}
	if flags&proxyResponseTransform != 0 {
		r.ResponseTransform = &ProxyTransform{Code: d.Str()}
	}
	if flags&proxyApplication != 0 {
		r.Application = &Ref{ID: d.Str()}
	}
	r.Configuration = d.JSONMap()
	r.RequireAuth = flags&proxyRequireAuth != 0
	r.CreatedAt, r.CreatedBy = d.Time(), d.Str()
	r.ModifiedAt = d.OptTime(flags, proxyModified)
	r.ModifiedBy, r.KeyHash = d.Str(), d.Bytes()
	d.CheckFlags(flags, proxyModified<<1)
	if err := d.End(); err != nil {
		*r = ProxyRecord{}
		return err
	}
	return nil
}

// ProxyRecordV0 is the JSON of the API's Proxy and key_hash as format
// version 0 stored it: read, never written
// (testdata/records/proxy-v0.json). application_id is not read: it is the
// application's id again.
type ProxyRecordV0 struct {
	ID                string          `json:"id"`
	TenantID          string          `json:"tenant_id"`
	Name              string          `json:"name"`
	Key               string          `json:"key"`
	DestinationURL    string          `json:"destination_url"`
	RequestTransform  *ProxyTransform `json:"request_transform,omitempty"`
	ResponseTransform *ProxyTransform `json:"response_transform,omitempty"`
	Application       *Ref            `json:"application,omitempty"`
	ApplicationID     string          `json:"application_id,omitempty"`
	Configuration     map[string]any  `json:"configuration,omitempty"`
	RequireAuth       bool            `json:"require_auth"`
	CreatedBy         string          `json:"created_by,omitempty"`
	CreatedAt         time.Time       `json:"created_at"`
	ModifiedBy        string          `json:"modified_by,omitempty"`
	ModifiedAt        *time.Time      `json:"modified_at,omitempty"`
	KeyHash           []byte          `json:"key_hash"`
}
