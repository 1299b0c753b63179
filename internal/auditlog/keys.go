package auditlog

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Line keys. A line is stored at log/<nanos>/<id> (a LineRecord, sealed)
// and indexed once, by entity:
//
//	idx/log-e/<type>/<entity><packed>    (empty value)
//
// where <entity> is a UUID entity id as a zero byte and its 16 bytes, or
// any other id followed by "/" (TenantKeys.LineIndex, internal/barrier),
// and <packed> is the line's suffix <nanos>/<id> in 24 bytes: the
// nanoseconds as 8 bytes big-endian and the id's 16 bytes, which sort as
// the text does (PackSuffix). So the whole log and one entity's lines are
// each walked backwards in time order (the log directly, an entity's
// lines under its prefix), and only the returned page is decrypted. A
// type's lines, under idx/log-e/<type>/, are in entity order: its pages
// walk the log and read each line's type (pages.go), and use that index
// only to answer a rare type exactly.
//
// Lines written before record format version 1 are indexed as they were:
// idx/log-entity/<type>/<entity id>/<nanos>/<id>, which entity and type
// queries read too (so a store of the old layout answers every query
// from the first open, and a line is in one of the two), and
// idx/log-type/<type>/<nanos>/<id>, which nothing reads any more and the
// sweeper removes in batches (the root's dropLegacyLogIndex).

// PackedLen is the length of a packed suffix.
const PackedLen = 8 + 16

// SuffixLen is the length of a line's key suffix, <16 hex digits>/<UUID>.
const SuffixLen = 16 + 1 + 36

// PackSuffix packs a line's suffix, <16 hex digits>/<canonical UUID>, in
// PackedLen bytes; false for anything else.
func PackSuffix(suffix string) (string, bool) {
	if len(suffix) != SuffixLen || suffix[16] != '/' {
		return "", false
	}
	u, ok := barrier.ParseUUID(suffix[17:])
	if !ok {
		return "", false
	}
	var b [PackedLen]byte
	for i := 0; i < 8; i++ {
		hi, lo := suffix[2*i], suffix[2*i+1]
		if !unit.IsLowerHex(hi) || !unit.IsLowerHex(lo) {
			return "", false
		}
		b[i] = unit.Unhex(hi)<<4 | unit.Unhex(lo)
	}
	copy(b[8:], u[:])
	return string(b[:]), true
}

// UnpackSuffix is the inverse of PackSuffix.
func UnpackSuffix(p []byte) string {
	var b [SuffixLen]byte
	hex.Encode(b[:16], p[:8])
	b[16] = '/'
	u := uuid.UUID(p[8:PackedLen])
	copy(b[17:], u.String())
	return string(b[:])
}

// IndexKey is the index entry of tenant tid's line at log/<suffix>, about
// entity typ/id: in idx/log-e, or for a suffix that does not pack (none
// the Vault makes), in the legacy idx/log-entity, which is read too.
func IndexKey(tid, typ, id, suffix string) barrier.Key {
	if p, ok := PackSuffix(suffix); ok && !strings.HasPrefix(id, "\x00") {
		return barrier.Tenant(tid).LineIndex(typ, id).Key(p)
	}
	return barrier.Tenant(tid).LogEntityIndex(typ, id).Key(suffix)
}

// PendingEntry is a parsed pending index entry (indexer.go):
// the line's key suffix and its entity.
type PendingEntry struct{ Suffix, Type, ID string }

// ParsePending parses what follows TenantKeys.PendingLogIndex in a key;
// false for anything else.
func ParsePending(rest string) (PendingEntry, bool) {
	if len(rest) <= SuffixLen || rest[SuffixLen] != '/' {
		return PendingEntry{}, false
	}
	typ, id, ok := strings.Cut(rest[SuffixLen+1:], "/")
	return PendingEntry{Suffix: rest[:SuffixLen], Type: typ, ID: id}, ok && typ != ""
}

// TimeKeyNanos is the first 16 characters of the suffix of a line
// created at nanos n, followed by "/": what compares with a range bound.
func TimeKeyNanos(n uint64) string { return barrier.TimeKey(time.Unix(0, int64(n)).UTC()) + "/" }

// PackedBound returns the bound, among packed suffixes, below which lie
// those whose text is below before: before packed when it is a line's
// suffix, or the time of its 16 hex digits when it is a range's end (or
// begins with them), and "" (no bound: the caller filters) otherwise.
func PackedBound(before string) string {
	if before == "" {
		return ""
	}
	if p, ok := PackSuffix(before); ok {
		return p
	}
	if len(before) < 16 {
		return ""
	}
	var b [8]byte
	for i := range 8 {
		hi, lo := before[2*i], before[2*i+1]
		if !unit.IsLowerHex(hi) || !unit.IsLowerHex(lo) {
			return ""
		}
		b[i] = unit.Unhex(hi)<<4 | unit.Unhex(lo)
	}
	if len(before) == 16 {
		return string(b[:]) // the lines before that nanosecond
	}
	// A text that goes on after its time: lines of that nanosecond may
	// lie on either side of it; bound after them, and filter.
	n := binary.BigEndian.Uint64(b[:])
	if n == ^uint64(0) {
		return ""
	}
	binary.BigEndian.PutUint64(b[:], n+1)
	return string(b[:])
}

// RangeBounds returns the bounds of the line suffixes (<nanos>/<id>)
// created in [start, end): those above after and below before ("": no
// bound).
func RangeBounds(start, end *time.Time) (after, before string) {
	if start != nil && barrier.UnixNanos(*start) > 0 {
		// Everything at or after start sorts after this key.
		after = fmt.Sprintf("%016x", uint64(barrier.UnixNanos(*start)-1)) + "/~"
	}
	if end != nil {
		before = barrier.TimeKey(*end)
	}
	return after, before
}
