package tokenvault

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Parts shared by the records of format version 1 written since every
// stored kind has a record of its own (records_<kind>.go), on top of the
// primitives of records.go:
//
//	list      uvarint 0 for a nil list, else n+1, then the n items: a nil
//	          list and an empty one are both kept, since the JSON of
//	          version 0 told them apart (null and []) and some of it is
//	          hashed or answered again (grantsDigest, the API's lists)
//	strs0     a list of str
//	rules     a list of access rules, each: str description, varint
//	          priority, str container, a list of conditions (str
//	          attribute, str operator, str value), str transform, strs0
//	          permissions
//	json      bytes: the JSON of a free-form value (a configuration),
//	          "null" for nil, decoded as encoding/json decodes into any
//	flags     uvarint of bits, one per optional field or boolean; a bit
//	          this code does not know is refused
//	optime    a time, present when its flag is set

// appendList appends the head of a list of n items, nil or not.
func appendList(b []byte, n int, isNil bool) []byte {
	if isNil {
		return appendUvarint(b, 0)
	}
	return appendUvarint(b, uint64(n)+1)
}

// list reads the head appendList wrote: -1 for a nil list, else how many
// items follow (each at least one byte, so a hostile count allocates
// nothing large).
func (r *recordReader) list() int {
	n := r.uvarint()
	if n == 0 {
		return -1
	}
	if n-1 > uint64(len(r.b)) {
		r.fail("count past the end")
		return -1
	}
	return int(n - 1)
}

// appendStrs0 appends ss as a list of str (nil kept).
func appendStrs0(b []byte, ss []string) []byte {
	b = appendList(b, len(ss), ss == nil)
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

// strs0 reads what appendStrs0 wrote.
func (r *recordReader) strs0() []string {
	n := r.list()
	if n < 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.str()
	}
	return ss
}

// appendRules appends access rules as a list (nil kept, and each rule's
// conditions and permissions as they are).
func appendRules(b []byte, rules []AccessRule) []byte {
	b = appendList(b, len(rules), rules == nil)
	for i := range rules {
		rule := &rules[i]
		b = appendStr(b, rule.Description)
		b = binary.AppendVarint(b, int64(rule.Priority))
		b = appendStr(b, rule.Container)
		b = appendList(b, len(rule.Conditions), rule.Conditions == nil)
		for _, c := range rule.Conditions {
			b = appendStr(appendStr(appendStr(b, c.Attribute), c.Operator), c.Value)
		}
		b = appendStr(b, rule.Transform)
		b = appendStrs0(b, rule.Permissions)
	}
	return b
}

// rules reads what appendRules wrote.
func (r *recordReader) rules() []AccessRule {
	n := r.list()
	if n < 0 {
		return nil
	}
	rules := make([]AccessRule, n)
	for i := range rules {
		rule := &rules[i]
		rule.Description = r.str()
		p := r.varint()
		if int64(int(p)) != p {
			r.fail("priority out of range")
		}
		rule.Priority = int(p)
		rule.Container = r.str()
		if m := r.list(); m >= 0 {
			rule.Conditions = make([]Condition, m)
			for j := range rule.Conditions {
				c := &rule.Conditions[j]
				c.Attribute, c.Operator, c.Value = r.str(), r.str(), r.str()
			}
		}
		rule.Transform = r.str()
		rule.Permissions = r.strs0()
		if r.err != nil {
			return nil
		}
	}
	return rules
}

// appendJSON appends v's JSON as bytes.
func appendJSON(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("%w: %v", errRecord, err)
	}
	return appendBytes(b, j), nil
}

// jsonMap reads what appendJSON wrote of a map: nil for "null".
func (r *recordReader) jsonMap() map[string]any {
	j := r.next(r.uvarint())
	if r.err != nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		r.fail("bad JSON value")
		return nil
	}
	return m
}

// appendHeader appends HTTP header fields: a list of names in order,
// each with its values (strs0).
func appendHeader(b []byte, h map[string][]string) []byte {
	b = appendList(b, len(h), h == nil)
	for _, k := range slices.Sorted(maps.Keys(h)) {
		b = appendStrs0(appendStr(b, k), h[k])
	}
	return b
}

// header reads what appendHeader wrote.
func (r *recordReader) header() map[string][]string {
	n := r.list()
	if n < 0 {
		return nil
	}
	h := make(map[string][]string, n)
	for range n {
		k := r.str()
		h[k] = r.strs0()
		if r.err != nil {
			return nil
		}
	}
	if len(h) != n {
		r.fail("repeated header name")
	}
	return h
}

// optTime reads a time when flag is set in flags, else nil.
func (r *recordReader) optTime(flags, flag uint64) *time.Time {
	if flags&flag == 0 {
		return nil
	}
	return ptr(r.time())
}

// checkFlags refuses a flag at or above limit (one this code does not know).
func (r *recordReader) checkFlags(flags, limit uint64) {
	if flags >= limit {
		r.fail("unknown flags")
	}
}

// decodeJSONV0 decodes the JSON of format version 0 of a kind into v.
func decodeJSONV0(b []byte, v any, kind string) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s JSON: %v", errRecord, kind, err)
	}
	return nil
}

// isJSONV0 reports whether b is the JSON of format version 0: it starts
// with '{', which no format version byte is.
func isJSONV0(b []byte) bool { return len(b) > 0 && b[0] == '{' }

// belongsAt refuses to encode a record of kind whose tenant and id do not
// make the store key key (recordKey).
func belongsAt(key barrier.Key, kind, tid, id string) error {
	if !barrier.Tenant(tid).IsRecord(key, kind, id) {
		return fmt.Errorf("%w: %s %s/%s does not belong at this key", errRecord, kind, tid, id)
	}
	return nil
}

// tenantRecordKind is the family of keys of tenant tid that hold records
// of one kind, and a new record of that kind.
type tenantRecordKind struct {
	prefix barrier.Prefix
	zero   func() recordCodec
}

// tenantRecordKinds are the families of tid's keys that hold records
// (keyspace.go): the re-seal pass (reseal.go) writes any it finds in the
// JSON of format version 0 in the current version. Everything else under
// the tenant is an index or schedule entry (empty) or its keyring.
func tenantRecordKinds(tid string) []tenantRecordKind {
	return []tenantRecordKind{
		{barrier.Tenant(tid).Records(kindToken), func() recordCodec { return &tokenRecord{} }},
		{barrier.Tenant(tid).Logs(), func() recordCodec { return &logRecord{} }},
		{barrier.Tenant(tid).Records(EntityApplication), func() recordCodec { return &applicationRecord{} }},
		{barrier.Tenant(tid).Records(EntityProxy), func() recordCodec { return &proxyRecord{} }},
		{barrier.Tenant(tid).Records(EntityTenantInvitation), func() recordCodec { return &invitationRecord{} }},
		{barrier.Tenant(tid).Records(EntityTenant), func() recordCodec { return &tenantRecord{} }},
		{barrier.Tenant(tid).Records(EntityTenantMember), func() recordCodec { return &memberRecord{} }},
		{barrier.Tenant(tid).Records(EntityReactorFormula), func() recordCodec { return &formulaRecord{} }},
		{barrier.Tenant(tid).Records(EntityReactor), func() recordCodec { return &reactorRecord{} }},
		{barrier.Tenant(tid).Records(EntitySession), func() recordCodec { return &sessionRecord{} }},
		{barrier.Tenant(tid).Records(kindIdempotency), func() recordCodec { return &idempotencyRecord{} }},
		{barrier.Tenant(tid).Records("count"), func() recordCodec { return &countRecord{} }},
		{barrier.Tenant(tid).TokenIntents(), func() recordCodec { return &tokenIntentRecord{} }},
		{barrier.Tenant(tid).Records(EntityWebhook), func() recordCodec { return &webhookRecord{} }},
		{barrier.Tenant(tid).Records(barrier.KindWebhookDelivery), func() recordCodec { return &webhookDeliveryRecord{} }},
	}
}
