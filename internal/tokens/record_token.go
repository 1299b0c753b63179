package tokens

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Record is a token as stored, sealed like every record: a type of its
// own, not the API's Token, so that neither changes the other by accident.
// Its fields are exactly what the stored form holds (below; the id and
// tenant are the store key's), and the root's tokenOf is where its shape
// meets Token's. Data, Mask and MaskExpression are kept as JSON text so
// numbers keep their exact form; an answer decodes Data and Mask (the
// root's tokenOf and tokenValue).
type Record struct {
	ID                    string
	TenantID              string
	Type                  string
	Fingerprint           string
	FingerprintExpression string
	Containers            []string
	Metadata              map[string]string
	SearchIndexes         []string
	DeduplicateToken      bool
	ExpiresAt             *time.Time
	CreatedBy             string
	CreatedAt             time.Time
	ModifiedBy            string
	ModifiedAt            *time.Time
	// Data is the value, Mask the evaluated mask (empty: none) and
	// MaskExpression the mask as given (or the type's default).
	Data           json.RawMessage
	Mask           json.RawMessage
	MaskExpression json.RawMessage
	// CVCAt is when the cvc in a card's Data was written; nil when it
	// holds none. See cvc.go.
	CVCAt *time.Time
	// Indexes are the index and schedule keys written for this token,
	// deleted with it.
	Indexes []string
	// AliasID: the id was drawn from an alias expression or derived
	// with fpe (internal/aliases), so a patch's mask is held to the
	// display rule too.
	AliasID bool
	// Decoy marks a honeytoken (a tenant's trap, POST /decoys): any read
	// of it is an anomaly; DecoyFreeze, that the read also freezes the
	// key that read it. Neither is ever shown but to GET /decoys.
	Decoy, DecoyFreeze bool
	// Subject is the data subject the token is about ("" for none), and
	// SubjectKeyID the id of the subject's data key that seals its Data
	// and Mask in the stored form (record_subject.go). Erased reports,
	// for a record read, that the key is destroyed: Data and Mask are
	// gone for good (never stored).
	Subject      string
	SubjectKeyID string
	Erased       bool
	// Sealing holds, for a token of a subject, the subject key while the
	// record is in use and the sealed bytes as read (record_subject.go);
	// nil for any other token.
	Sealing *Sealing
}

// Expired reports whether the token has expired at now.
func (r *Record) Expired(now time.Time) bool {
	return r.ExpiresAt != nil && !now.Before(*r.ExpiresAt)
}

// The stored form of a token (Record), at tenant/<tid>/token/<id>.
//
// Format version 1 (binary; see internal/unit's codec.go for uvarint, bytes, str, time):
//
//	0x01              format version
//	uvarint flags     1 deduplicate_token, 2 expires_at, 4 modified_at,
//	                  8 cvc_at, 16 fingerprint stored as hex bytes,
//	                  32 alias_id (the id was drawn from an alias
//	                  expression; no bytes of its own, and a record
//	                  without it encodes as before),
//	                  64 decoy, 128 decoy_freeze (likewise: no bytes),
//	                  256 subject (the fields after the index entries; data
//	                  and mask are then empty, kept in the sealed bytes)
//	str   type
//	bytes data        the JSON text, as written
//	bytes mask        JSON text; empty: none
//	bytes mask_expression
//	fingerprint       flag 16: one byte n, then n bytes (the hex decoded);
//	                  else str
//	str   fingerprint_expression
//	uvarint n, n str  containers
//	uvarint n, n (str key, str value)   metadata, by key
//	uvarint n, n str  search_indexes
//	time  created_at
//	str   created_by
//	time  expires_at   (flag 2)
//	time  modified_at  (flag 4)
//	str   modified_by
//	time  cvc_at       (flag 8)
//	uvarint n, n index entries, each a uvarint tag:
//	  0 str             the store key as it is
//	  1                 the fingerprint index entry, idx/fp/<fingerprint>/<id>
//	  2                 the expiry schedule entry of expires_at
//	  3                 the cvc schedule entry of cvc_at
//	  4 str name, hex   tenant/<tid>/idx/<name>/<hex>/<id> (search, meta)
//	str   subject          (flag 256)
//	str   subject_key_id   (flag 256)
//	bytes sealed           (flag 256) bytes data, bytes mask, sealed
//	                       (internal/seal) under the subject's data key
//	                       for the store key and the key id
//
// The tenant and id are the store key's, not stored again. Version 0 is
// the JSON the Vault wrote before (RecordV0); it still reads.
//
// Why binary. BenchmarkRecord (internal/records/records_bench_test.go; go test -run XXX
// -bench Record -benchmem -benchtime 300ms ./internal/records, 2 shared CPUs, Go 1.26)
// encodes and decodes the same records in three forms: this one, a lean
// JSON form (short keys, tenant and id left to the key as here), and the
// JSON of version 0. Plaintext bytes, ns/op, allocs/op:
//
//	                   plain value (POST /tokenize {"v": ...})   card with every field
//	                   bytes  encode      decode                 bytes  encode       decode
//	binary v1             87   241 ns 0    407 ns  7               500   878 ns  4    1648 ns 32
//	lean JSON            404  1134 ns 3   3095 ns 16              1250  4373 ns 11    9078 ns 40
//	JSON v0              560  1181 ns 2   3798 ns 17              1487  4549 ns 10    9895 ns 41
//
//	audit line           40   230 ns 0    179 ns  2   (lean JSON 195 B, 645/1761 ns; v0 338 B, 992/3001 ns)
//
// Binary is 4.6 times smaller than lean JSON for the common token and
// 5 to 8 times faster to decode, with no allocation to encode; the cost is
// this file and internal/unit's codec.go, which golden fixtures (testdata/records) and
// FuzzRecords pin down. Sealing adds seal.Overhead (45 bytes) to each.
const Format = 1

const (
	tokDedupe = 1 << iota
	tokExpires
	tokModified
	tokCVC
	tokFingerprintHex
	tokAliasID
	tokDecoy
	tokDecoyFreeze
	tokSubject
)

// Index entry tags.
const (
	idxRaw = iota
	idxFingerprint
	idxExpiry
	idxCVC
	idxTenantHex
)

func (r *Record) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	if !barrier.Tenant(r.TenantID).IsRecord(key, Kind, r.ID) {
		return b, fmt.Errorf("token %s/%s does not belong at this key", r.TenantID, r.ID)
	}
	if unit.CheckRecordTimes("token", &r.CreatedAt, r.ExpiresAt, r.ModifiedAt, r.CVCAt) != nil {
		// Only a token read from version 0 holds such a time: it is
		// written back in version 0, which holds it, so that writes to
		// it (the sweeper's removal of a cvc among them) go on.
		v0, err := json.Marshal(r.V0())
		if err != nil {
			return b, fmt.Errorf("%w: token JSON: %v", unit.ErrRecord, err)
		}
		return append(b, v0...), nil
	}
	var flags uint64
	if r.DeduplicateToken {
		flags |= tokDedupe
	}
	if r.ExpiresAt != nil {
		flags |= tokExpires
	}
	if r.ModifiedAt != nil {
		flags |= tokModified
	}
	if r.CVCAt != nil {
		flags |= tokCVC
	}
	var fpBuf [64]byte
	fpBytes, fpHex := unit.AppendHex(fpBuf[:0], r.Fingerprint)
	if fpHex {
		flags |= tokFingerprintHex
	}
	if r.AliasID {
		flags |= tokAliasID
	}
	if r.Decoy {
		flags |= tokDecoy
	}
	if r.DecoyFreeze {
		flags |= tokDecoyFreeze
	}
	data, mask := r.Data, r.Mask
	var sealed []byte
	if r.Subject != "" {
		flags |= tokSubject
		var err error
		if sealed, err = r.sealSubject(key); err != nil {
			return b, err
		}
		data, mask = nil, nil
	}
	b = append(b, Format)
	b = binary.AppendUvarint(b, flags)
	b = unit.AppendStr(b, r.Type)
	b = unit.AppendBytes(b, data)
	b = unit.AppendBytes(b, mask)
	b = unit.AppendBytes(b, r.MaskExpression)
	if fpHex {
		b = append(b, fpBytes...)
	} else {
		b = unit.AppendStr(b, r.Fingerprint)
	}
	b = unit.AppendStr(b, r.FingerprintExpression)
	b = unit.AppendStrs(b, r.Containers)
	b = binary.AppendUvarint(b, uint64(len(r.Metadata)))
	if len(r.Metadata) == 1 {
		for k, v := range r.Metadata {
			b = unit.AppendStr(unit.AppendStr(b, k), v)
		}
	} else if len(r.Metadata) > 1 {
		keys := make([]string, 0, len(r.Metadata))
		for k := range r.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = unit.AppendStr(unit.AppendStr(b, k), r.Metadata[k])
		}
	}
	b = unit.AppendStrs(b, r.SearchIndexes)
	b = unit.AppendTime(b, r.CreatedAt)
	b = unit.AppendStr(b, r.CreatedBy)
	if r.ExpiresAt != nil {
		b = unit.AppendTime(b, *r.ExpiresAt)
	}
	if r.ModifiedAt != nil {
		b = unit.AppendTime(b, *r.ModifiedAt)
	}
	b = unit.AppendStr(b, r.ModifiedBy)
	if r.CVCAt != nil {
		b = unit.AppendTime(b, *r.CVCAt)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Indexes)))
	for _, k := range r.Indexes {
		b = r.appendIndex(b, k)
	}
	if flags&tokSubject != 0 {
		b = unit.AppendStr(b, r.Subject)
		b = unit.AppendStr(b, r.SubjectKeyID)
		b = unit.AppendBytes(b, sealed)
	}
	return b, nil
}

// appendIndex appends one index entry of the record, as short as it goes.
func (r *Record) appendIndex(b []byte, k string) []byte {
	tk, id := barrier.Tenant(r.TenantID), r.ID
	if r.Fingerprint != "" && tk.IsFingerprintEntry(k, r.Fingerprint, id) {
		return binary.AppendUvarint(b, idxFingerprint)
	}
	if r.ExpiresAt != nil && tk.IsExpiry(k, *r.ExpiresAt, Kind, id) {
		return binary.AppendUvarint(b, idxExpiry)
	}
	if r.CVCAt != nil && tk.IsCVCDue(k, *r.CVCAt, id) {
		return binary.AppendUvarint(b, idxCVC)
	}
	// tenant/<tid>/idx/<name>/<hex>/<id>
	if name, value, ok := tk.IndexEntryOf(k, id); ok {
		nb := unit.AppendStr(binary.AppendUvarint(b, idxTenantHex), name)
		if out, ok := unit.AppendHex(nb, value); ok {
			return out
		}
	}
	return unit.AppendStr(binary.AppendUvarint(b, idxRaw), k)
}

func (r *Record) DecodeRecord(key barrier.Key, b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		return r.decodeV0(key, b)
	}
	d, err := unit.BinaryRecord(b, Format, "token")
	if err != nil {
		return err
	}
	*r = Record{}
	r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
	flags := d.Uvarint()
	r.DeduplicateToken = flags&tokDedupe != 0
	r.AliasID = flags&tokAliasID != 0
	r.Decoy, r.DecoyFreeze = flags&tokDecoy != 0, flags&tokDecoyFreeze != 0
	r.Type = d.Str()
	r.Data = d.Bytes()
	r.Mask = d.Bytes()
	r.MaskExpression = d.Bytes()
	if flags&tokFingerprintHex != 0 {
		r.Fingerprint = d.HexStr()
	} else {
		r.Fingerprint = d.Str()
	}
	r.FingerprintExpression = d.Str()
	if ss := d.Strs(); len(ss) > 0 {
		r.Containers = ss
	}
	if n := d.Count(); n > 0 {
		r.Metadata = make(map[string]string, n)
		for range n {
			k := d.Str()
			r.Metadata[k] = d.Str()
		}
	}
	if ss := d.Strs(); len(ss) > 0 {
		r.SearchIndexes = ss
	}
	r.CreatedAt = d.Time()
	r.CreatedBy = d.Str()
	if flags&tokExpires != 0 {
		r.ExpiresAt = new(d.Time())
	}
	if flags&tokModified != 0 {
		r.ModifiedAt = new(d.Time())
	}
	r.ModifiedBy = d.Str()
	if flags&tokCVC != 0 {
		r.CVCAt = new(d.Time())
	}
	if n := d.Count(); n > 0 {
		r.Indexes = make([]string, 0, n)
		for range n {
			k := r.readIndex(&d)
			if d.Err() != nil {
				break
			}
			r.Indexes = append(r.Indexes, k)
		}
	}
	if flags&tokSubject != 0 {
		r.Subject = d.Str()
		r.SubjectKeyID = d.Str()
		r.Sealing = &Sealing{sealed: d.Bytes()}
		r.Data, r.Mask = nil, nil
	}
	if flags >= tokSubject<<1 {
		d.Fail("unknown flags")
	}
	if err := d.End(); err != nil {
		*r = Record{}
		return err
	}
	return nil
}

func (r *Record) readIndex(d *unit.Reader) string {
	tid, id := r.TenantID, r.ID
	switch tag := d.Uvarint(); tag {
	case idxRaw:
		return d.Str()
	case idxFingerprint:
		if r.Fingerprint != "" {
			return barrier.Tenant(tid).FingerprintIndex(r.Fingerprint).Key(id).String()
		}
	case idxExpiry:
		if r.ExpiresAt != nil {
			return barrier.Tenant(tid).Expiry(*r.ExpiresAt, Kind, id).String()
		}
	case idxCVC:
		if r.CVCAt != nil {
			return barrier.Tenant(tid).CVCDue(*r.CVCAt, id).String()
		}
	case idxTenantHex:
		name := d.Str()
		return barrier.Tenant(tid).Index(name).Key(d.HexStr() + "/" + id).String()
	}
	d.Fail("bad index entry")
	return ""
}

// RecordV0 is the JSON form tokens were stored in before format
// version 1 (the API's Token with the fields below, the tags as they
// were): read, and written only for a token whose times version 1 cannot
// hold (appendRecord) and by tests that write a store as that code did.
// testdata/records/token-v0.json is one.
type RecordV0 struct {
	ID                    string            `json:"id"`
	TenantID              string            `json:"tenant_id"`
	Type                  string            `json:"type"`
	Fingerprint           string            `json:"fingerprint,omitempty"`
	FingerprintExpression string            `json:"fingerprint_expression,omitempty"`
	Containers            []string          `json:"containers"`
	Metadata              map[string]string `json:"metadata,omitempty"`
	SearchIndexes         []string          `json:"search_indexes,omitempty"`
	DeduplicateToken      bool              `json:"deduplicate_token,omitempty"`
	ExpiresAt             *time.Time        `json:"expires_at,omitempty"`
	CreatedBy             string            `json:"created_by,omitempty"`
	CreatedAt             time.Time         `json:"created_at"`
	ModifiedBy            string            `json:"modified_by,omitempty"`
	ModifiedAt            *time.Time        `json:"modified_at,omitempty"`
	Data                  json.RawMessage   `json:"data"`
	Mask                  json.RawMessage   `json:"mask,omitempty"`
	MaskExpression        json.RawMessage   `json:"mask_expression,omitempty"`
	CVCAt                 *time.Time        `json:"cvc_at,omitempty"`
	Indexes               []string          `json:"indexes,omitempty"`
}

// v0 is r in the JSON form of version 0.
func (r *Record) V0() RecordV0 {
	return RecordV0{
		ID: r.ID, TenantID: r.TenantID, Type: r.Type, Fingerprint: r.Fingerprint,
		FingerprintExpression: r.FingerprintExpression, Containers: r.Containers, Metadata: r.Metadata,
		SearchIndexes: r.SearchIndexes, DeduplicateToken: r.DeduplicateToken, ExpiresAt: r.ExpiresAt,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, ModifiedBy: r.ModifiedBy, ModifiedAt: r.ModifiedAt,
		Data: r.Data, Mask: r.Mask, MaskExpression: r.MaskExpression, CVCAt: r.CVCAt, Indexes: r.Indexes,
	}
}

func (r *Record) decodeV0(key barrier.Key, b []byte) error {
	var v RecordV0
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("%w: token JSON: %v", unit.ErrRecord, err)
	}
	*r = Record{
		ID: v.ID, TenantID: v.TenantID, Type: v.Type, Fingerprint: v.Fingerprint,
		FingerprintExpression: v.FingerprintExpression, Containers: v.Containers, Metadata: v.Metadata,
		SearchIndexes: v.SearchIndexes, DeduplicateToken: v.DeduplicateToken, ExpiresAt: v.ExpiresAt,
		CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt, ModifiedBy: v.ModifiedBy, ModifiedAt: v.ModifiedAt,
		Data: v.Data, Mask: v.Mask, MaskExpression: v.MaskExpression, CVCAt: v.CVCAt, Indexes: v.Indexes,
	}
	// The key is what the seal authenticated: it names the token.
	r.TenantID, r.ID = key.Tenant(), unit.KeyID(key.String())
	return nil
}

// Kind is the record kind of every token type (the root's kindToken):
// the <kind> of a token's store key, tenant/<tid>/token/<id>.
const Kind = "token"
