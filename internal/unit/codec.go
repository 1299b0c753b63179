package unit

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault/internal/barrier"
)

// The primitives of the stored records' encoding (see Record), shared by
// every feature's records. The encoding is append-style, like
// encoding/binary's Append functions:
//
//	uvarint        unsigned LEB128 (binary.AppendUvarint)
//	varint         zigzag LEB128 (binary.AppendVarint)
//	bytes          uvarint length, then the bytes
//	str            uvarint h, then: h&3 == 0: a literal of h>>2 bytes;
//	               h&3 == 1: entry h>>2 of recordWords (no bytes follow);
//	               h&3 == 2: a canonical lowercase UUID as its 16 bytes
//	time           varint Unix seconds (years 0 to 9999), uvarint
//	               nanoseconds (< 1e9), varint zone offset in seconds
//	               (0 is UTC)
//
// and, on top of them, the parts of format version 1:
//
//	list      uvarint 0 for a nil list, else n+1, then the n items: a nil
//	          list and an empty one are both kept, since the JSON of
//	          version 0 told them apart (null and []) and some of it is
//	          hashed or answered again (grantsDigest, the API's lists)
//	strs0     a list of str
//	json      bytes: the JSON of a free-form value (a configuration),
//	          "null" for nil, decoded as encoding/json decodes into any
//	flags     uvarint of bits, one per optional field or boolean; a bit
//	          this code does not know is refused
//	optime    a time, present when its flag is set
//
// Decoding never panics and never trusts a length: a record that does not
// parse is an internal error naming its key.

// ErrRecord is wrapped by every decoding failure.
var ErrRecord = errors.New("malformed record")

// recordWords are the strings str encodes as one small number: the values
// the hot records repeat (types, actor kinds, operations, default
// containers and expressions, frequent messages). It is part of format
// version 1 of every record: entries may never change or move, and an
// entry added is a new format version (an older reader cannot decode it).
// TestRecordWords pins it.
var recordWords = [...]string{
	// 0: token types
	TypeToken, TypeCard, TypeBank,
	// 3: actor types
	ActorApplication, ActorUser, ActorSession, ActorSystem, "operator",
	// 8: entity types not already above
	EntityProxy, EntityReactor, EntityReactorFormula, EntityTenant,
	EntityTenantMember, EntityTenantInvitation,
	// 14: operations
	OpCreate, OpRead, OpUpdate, OpDelete, OpInvoke,
	// 19: default containers and fingerprint expressions
	"/general/high/", "/pci/high/", "/bank/high/",
	"{{ data | stringify }}", "{{ data.number }}", "{{ data.account_number }}|{{ data.routing_number }}",
	// 25: frequent log messages
	"Token created", "Token read", "Token updated", "Token deleted", "Token expired",
	"Token read (deduplicated create)", "Token read (listed)", "Token read (searched)",
	"Token detokenized", "Token used by proxy", "Token used by reactor",
	"Card cvc removed (retention)",
}

// wordIndex finds a string among recordWords.
var wordIndex = func() map[string]uint64 {
	m := make(map[string]uint64, len(recordWords))
	for i, w := range recordWords {
		if _, dup := m[w]; !dup {
			m[w] = uint64(i)
		}
	}
	return m
}()

const (
	strLiteral = 0
	strWord    = 1
	strUUID    = 2
)

func AppendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// AppendStr appends s as a str: a word, a UUID or a literal.
func AppendStr(b []byte, s string) []byte {
	if i, ok := wordIndex[s]; ok {
		return binary.AppendUvarint(b, i<<2|strWord)
	}
	if u, ok := barrier.ParseUUID(s); ok {
		b = append(b, strUUID)
		return append(b, u[:]...)
	}
	b = binary.AppendUvarint(b, uint64(len(s))<<2|strLiteral)
	return append(b, s...)
}

func AppendTime(b []byte, t time.Time) []byte {
	_, off := t.Zone()
	b = binary.AppendVarint(b, t.Unix())
	b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
	return binary.AppendVarint(b, int64(off))
}

// AppendHex appends s, lowercase hex of 1 to 255 bytes, as those bytes,
// and reports false (appending nothing) for anything else.
func AppendHex(b []byte, s string) ([]byte, bool) {
	if len(s) == 0 || len(s)%2 != 0 || len(s) > 510 {
		return b, false
	}
	for i := 0; i < len(s); i++ {
		if !IsLowerHex(s[i]) {
			return b, false
		}
	}
	b = append(b, byte(len(s)/2))
	for i := 0; i < len(s); i += 2 {
		b = append(b, Unhex(s[i])<<4|Unhex(s[i+1]))
	}
	return b, true
}

// unhex is the value of a lowercase hex digit.
func Unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

func IsLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// Reader decodes a record's plaintext. The first error sticks: later
// reads return zero values, and err reports it.
// AppendStrs appends a list of str, counted.
func AppendStrs(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = AppendStr(b, s)
	}
	return b
}

// strs reads what AppendStrs wrote; never nil.
func (r *Reader) Strs() []string {
	ss := make([]string, r.Count())
	for i := range ss {
		ss[i] = r.Str()
	}
	return ss
}

// BinaryRecord returns a reader of the record b after its format version
// byte, or an error when b is of a version other than version. (A b too
// short for the byte leaves the reader's error set.)
func BinaryRecord(b []byte, version byte, kind string) (Reader, error) {
	d := Reader{b: b}
	if v := d.Byte(); v != version && d.err == nil {
		return d, fmt.Errorf("%w: %s format version %d", ErrRecord, kind, v)
	}
	return d, nil
}

type Reader struct {
	b   []byte
	err error
}

func (r *Reader) Fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrRecord, what)
	}
	r.b = nil
}

func (r *Reader) Byte() byte {
	if len(r.b) == 0 {
		r.Fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.Fail("bad uvarint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *Reader) Varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.Fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// next returns the n bytes that follow (aliasing the plaintext).
func (r *Reader) Next(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.Fail("truncated")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// count reads a number of items that each take at least one byte, so a
// hostile count cannot make a large allocation.
func (r *Reader) Count() int {
	n := r.Uvarint()
	if n > uint64(len(r.b)) {
		r.Fail("count past the end")
		return 0
	}
	return int(n)
}

// bytes reads a length-prefixed byte string, copied; nil when empty.
func (r *Reader) Bytes() []byte {
	v := r.Next(r.Uvarint())
	if len(v) == 0 {
		return nil
	}
	return append([]byte(nil), v...)
}

func (r *Reader) Str() string {
	h := r.Uvarint()
	switch h & 3 {
	case strLiteral:
		return string(r.Next(h >> 2))
	case strWord:
		if i := h >> 2; i < uint64(len(recordWords)) {
			return recordWords[i]
		}
		r.Fail("unknown word")
	case strUUID:
		if h == strUUID {
			if v := r.Next(16); v != nil {
				return uuid.UUID(v).String()
			}
			return ""
		}
		r.Fail("bad uuid header")
	default:
		r.Fail("bad string header")
	}
	return ""
}

// hexStr reads what AppendHex wrote.
func (r *Reader) HexStr() string {
	n := uint64(r.Byte())
	if n == 0 && r.err == nil {
		r.Fail("empty hex")
	}
	return hex.EncodeToString(r.Next(n))
}

func (r *Reader) Time() time.Time {
	sec := r.Varint()
	nsec := r.Uvarint()
	off := r.Varint()
	if nsec >= 1e9 || off <= -24*3600 || off >= 24*3600 || sec < minRecordSec || sec > maxRecordSec {
		r.Fail("bad time")
	}
	if r.err != nil {
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec))
	if off == 0 {
		return t.UTC()
	}
	return t.In(time.FixedZone("", int(off)))
}

// The times a record holds are within the years 0 to 9999, the range of
// RFC 3339 and of the JSON records of before.
var (
	minRecordSec = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxRecordSec = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

// CheckRecordTimes refuses, with an ErrRecord naming what, a time the
// reader (Reader.time) would refuse: before year 0 or after 9999 in
// UTC, or with an offset of a day or more. Only a record decoded from the
// JSON of format version 0 can hold one (year 0 at +01:00 is year -1 in
// UTC), and it is never written in a record that would not decode: a
// token is written back in version 0 (tokens.Record.AppendRecord); an
// application or a log line is refused, so a write to it fails and
// changes nothing, and the re-seal pass seals its JSON again as it is. A
// nil time is skipped.
func CheckRecordTimes(what string, times ...*time.Time) error {
	for _, at := range times {
		if at != nil && !RecordHolds(*at) {
			return fmt.Errorf("%w: %s time %v out of range", ErrRecord, what, *at)
		}
	}
	return nil
}

// RecordHolds reports whether a record can hold at: within the years 0
// to 9999 in UTC, with an offset of less than a day.
func RecordHolds(at time.Time) bool {
	_, off := at.Zone()
	sec := at.Unix()
	return sec >= minRecordSec && sec <= maxRecordSec && off > -24*3600 && off < 24*3600
}

// CheckExpiry reports under path an expiry a caller gave that is not after
// now, or that no record holds. RFC 3339 allows 9999-12-31T23:30:00-01:00,
// which is in the year 10000 in UTC: stored, it made the write fail as an
// internal error (an application) or left the token in the JSON of format
// version 0 (a token).
func CheckExpiry(at time.Time, now time.Time, path string, fe FieldErrors) {
	switch {
	case !at.After(now):
		fe.Add(path, "must be in the future")
	case !RecordHolds(at) || at.UTC().Year() > 9999:
		// The first instant of 10000 is held, but answered in UTC it
		// is no RFC 3339 date-time (json.Marshal refuses it).
		fe.Add(path, "must be before the year 10000 in UTC")
	}
}

// end checks that the whole record was read.
func (r *Reader) End() error {
	if r.err == nil && len(r.b) > 0 {
		r.Fail("trailing bytes")
	}
	return r.err
}

// KeyID returns the last segment of a store key: the id of the record.
func KeyID(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[i+1:]
		}
	}
	return key
}

// AppendList appends the head of a list of n items, nil or not.
func AppendList(b []byte, n int, isNil bool) []byte {
	if isNil {
		return binary.AppendUvarint(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1)
}

// list reads the head AppendList wrote: -1 for a nil list, else how many
// items follow (each at least one byte, so a hostile count allocates
// nothing large).
func (r *Reader) List() int {
	n := r.Uvarint()
	if n == 0 {
		return -1
	}
	if n-1 > uint64(len(r.b)) {
		r.Fail("count past the end")
		return -1
	}
	return int(n - 1)
}

// AppendStrs0 appends ss as a list of str (nil kept).
func AppendStrs0(b []byte, ss []string) []byte {
	b = AppendList(b, len(ss), ss == nil)
	for _, s := range ss {
		b = AppendStr(b, s)
	}
	return b
}

// strs0 reads what AppendStrs0 wrote.
func (r *Reader) Strs0() []string {
	n := r.List()
	if n < 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.Str()
	}
	return ss
}

// AppendJSON appends v's JSON as bytes.
func AppendJSON(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("%w: %v", ErrRecord, err)
	}
	return AppendBytes(b, j), nil
}

// JSONMap reads what AppendJSON wrote of a map: nil for "null".
func (r *Reader) JSONMap() map[string]any {
	j := r.Next(r.Uvarint())
	if r.err != nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		r.Fail("bad JSON value")
		return nil
	}
	return m
}

// AppendHeader appends HTTP header fields: a list of names in order,
// each with its values (strs0).
func AppendHeader(b []byte, h map[string][]string) []byte {
	b = AppendList(b, len(h), h == nil)
	for _, k := range slices.Sorted(maps.Keys(h)) {
		b = AppendStrs0(AppendStr(b, k), h[k])
	}
	return b
}

// header reads what AppendHeader wrote.
func (r *Reader) Header() map[string][]string {
	n := r.List()
	if n < 0 {
		return nil
	}
	h := make(map[string][]string, n)
	for range n {
		k := r.Str()
		h[k] = r.Strs0()
		if r.err != nil {
			return nil
		}
	}
	if len(h) != n {
		r.Fail("repeated header name")
	}
	return h
}

// optTime reads a time when flag is set in flags, else nil.
func (r *Reader) OptTime(flags, flag uint64) *time.Time {
	if flags&flag == 0 {
		return nil
	}
	return new(r.Time())
}

// checkFlags refuses a flag at or above limit (one this code does not know).
func (r *Reader) CheckFlags(flags, limit uint64) {
	if flags >= limit {
		r.Fail("unknown flags")
	}
}

// DecodeJSONV0 decodes the JSON of format version 0 of a kind into v.
func DecodeJSONV0(b []byte, v any, kind string) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s JSON: %v", ErrRecord, kind, err)
	}
	return nil
}

// IsJSONV0 reports whether b is the JSON of format version 0: it starts
// with '{', which no format version byte is.
func IsJSONV0(b []byte) bool { return len(b) > 0 && b[0] == '{' }

// BelongsAt refuses to encode a record of kind whose tenant and id do not
// make the store key key (recordKey).
func BelongsAt(key barrier.Key, kind, tid, id string) error {
	if !barrier.Tenant(tid).IsRecord(key, kind, id) {
		return fmt.Errorf("%w: %s %s/%s does not belong at this key", ErrRecord, kind, tid, id)
	}
	return nil
}

// Err is the first failure the reader met, or nil.
func (r *Reader) Err() error { return r.err }
