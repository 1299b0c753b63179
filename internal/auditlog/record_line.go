package auditlog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// LineRecord is an audit log line as stored, at
// tenant/<tid>/log/<nanos>/<id> (see keys.go for the layout and its
// index). The tenant and the line's id are the store key's.
//
// Format version 1 (binary; see internal/unit's codec.go for str and time):
//
//	0x01       format version
//	uvarint    flags: 1 created_at is the time in the key, in UTC (and is
//	           not stored again); 2 the line records an access to a
//	           token's data and holds its transform and channel; 4 the
//	           line is chained (chain.go) and holds its link; 8 the line
//	           names the purpose of access of the call
//	str        actor_id
//	str        actor_type
//	str        entity_type
//	str        entity_id
//	str        operation
//	str        message
//	str        transform (flag 2): reveal, mask or redact
//	str        channel (flag 2): get, list, search, detokenize, proxy,
//	           reactor or create (the Channel* constants)
//	str        application (flag 2): for a session's access, the private
//	           application that authorized the session; else empty
//	str        purpose (flag 8): the purpose of access the call named
//	time       created_at (unless flag 1)
//	uvarint    seq (flag 4): the line's sequence number in the chain
//	32 bytes   prev (flag 4): the hash of line seq-1 (zeros for seq 1)
//	32 bytes   hash (flag 4): the line's own hash (auditchain.LineHash)
//
// Flag 4 came with the hash chain: a line was written without it and got
// it when the linker linked it, beside its commit, writing the line again
// (testdata/records/log-chained-v1.bin). The linker no longer does: it
// writes the link as a record of its own (Link, records_chain.go),
// and lines with flag 4 are those an older version linked; they still
// read, and their link counts as their link record would (withLink).
// Flag 2 came with GET /tokens/{id}/access: lines written before it have
// neither, and read as they did (testdata/records/log-v1.bin; a read
// line with them is testdata/records/log-access-v1.bin).
// Flag 8 came with purposes of access: only a line naming one has it,
// so every other line is as it was.
// Version 0 is the API's Log as JSON (lineRecordV0), which lines were
// stored as before; it still reads. A token's creation line is 40 bytes
// in version 1 (ids as 16 bytes; types, operation and frequent messages
// as one-byte words; the time left to the key) against 195 in lean JSON
// and 338 in version 0; see records_token.go for the benchmarks and the
// choice.
type LineRecord struct {
	// Line is the line, defined once for the store, the chain and the
	// export (auditchain.Line). Its TenantID and ID are the key's and
	// are not stored (nor set when a line is read). Transform, Channel
	// and Application are set on a line recording an access to a
	// token's data (logTokenRead), empty on every other line and on
	// lines written before they were recorded.
	auditchain.Line
	// Link is the line's place in its tenant's chain: read from its link
	// record (WithLink, chain.go), or from the line itself for a line an
	// older version linked; nil on a line not chained yet (or written
	// before chains were). The linker writes it to the link record only.
	Link *Link
}

// Link is a chained line's sequence number, the hash of the line
// before it and its own.
type Link struct {
	Seq        uint64
	Prev, Hash auditchain.Hash
}

const logFormat = 1

const (
	// logAtKeyTime is the flag of a line whose created_at is its key's time.
	logAtKeyTime = 1
	// logAccessed is the flag of a line holding a transform and a channel.
	logAccessed = 2
	// logChained is the flag of a line holding its chain link.
	logChained = 4
	// logPurpose is the flag of a line naming a purpose of access.
	logPurpose = 8
	// logFlags are the flags a line may have.
	logFlags = logAtKeyTime | logAccessed | logChained | logPurpose
)

func (l *LineRecord) AppendRecord(b []byte, key barrier.Key) ([]byte, error) {
	var flags uint64
	inRange := !l.CreatedAt.Before(time.Unix(0, 0)) && !l.CreatedAt.After(barrier.LastNano)
	if n, ok := KeyNanos(key.String()); ok && inRange && l.CreatedAt.UnixNano() == n {
		if _, off := l.CreatedAt.Zone(); off == 0 {
			flags |= logAtKeyTime
		}
	}
	if l.Transform != "" || l.Channel != "" || l.Application != "" {
		flags |= logAccessed
	}
	if l.Link != nil {
		flags |= logChained
	}
	if l.Purpose != "" {
		flags |= logPurpose
	}
	b = append(b, logFormat)
	b = binary.AppendUvarint(b, flags)
	b = unit.AppendStr(b, l.ActorID)
	b = unit.AppendStr(b, l.ActorType)
	b = unit.AppendStr(b, l.EntityType)
	b = unit.AppendStr(b, l.EntityID)
	b = unit.AppendStr(b, l.Operation)
	b = unit.AppendStr(b, l.Message)
	if flags&logAccessed != 0 {
		b = unit.AppendStr(b, l.Transform)
		b = unit.AppendStr(b, l.Channel)
		b = unit.AppendStr(b, l.Application)
	}
	if flags&logPurpose != 0 {
		b = unit.AppendStr(b, l.Purpose)
	}
	if flags&logAtKeyTime == 0 {
		if err := unit.CheckRecordTimes("log line", &l.CreatedAt); err != nil {
			return b, err
		}
		b = unit.AppendTime(b, l.CreatedAt)
	}
	if l.Link != nil {
		b = binary.AppendUvarint(b, l.Link.Seq)
		b = append(b, l.Link.Prev[:]...)
		b = append(b, l.Link.Hash[:]...)
	}
	return b, nil
}

// KeyNanos reads the time of the line stored at key, .../<nanos>/<id>.
func KeyNanos(key string) (int64, bool) {
	id := unit.KeyID(key)
	rest := key[:len(key)-len(id)]
	if len(rest) < 17 || rest[len(rest)-1] != '/' {
		return 0, false
	}
	var n uint64
	for _, c := range []byte(rest[len(rest)-17 : len(rest)-1]) {
		if !unit.IsLowerHex(c) {
			return 0, false
		}
		n = n<<4 | uint64(unit.Unhex(c))
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

func (l *LineRecord) DecodeRecord(key barrier.Key, b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var v lineRecordV0
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("%w: log JSON: %v", unit.ErrRecord, err)
		}
		*l = LineRecord{Line: auditchain.Line{ActorID: v.ActorID, ActorType: v.ActorType, EntityType: v.EntityType, EntityID: v.EntityID,
			Operation: v.Operation, Message: v.Message, CreatedAt: v.CreatedAt}}
		return nil
	}
	d, err := unit.BinaryRecord(b, logFormat, "log")
	if err != nil {
		return err
	}
	flags := d.Uvarint()
	*l = LineRecord{Line: auditchain.Line{
		ActorID: d.Str(), ActorType: d.Str(), EntityType: d.Str(), EntityID: d.Str(),
		Operation: d.Str(), Message: d.Str(),
	}}
	if flags&logAccessed != 0 {
		l.Transform, l.Channel, l.Application = d.Str(), d.Str(), d.Str()
	}
	if flags&logPurpose != 0 {
		if l.Purpose = d.Str(); l.Purpose == "" {
			d.Fail("empty purpose")
		}
	}
	switch {
	case flags&^logFlags != 0:
		d.Fail("unknown flags")
	case flags&logAtKeyTime != 0:
		n, ok := KeyNanos(key.String())
		if !ok {
			d.Fail("no time in the key")
		}
		l.CreatedAt = time.Unix(0, n).UTC()
	default:
		l.CreatedAt = d.Time()
	}
	if flags&logChained != 0 {
		l.Link = &Link{Seq: d.Uvarint()}
		copy(l.Link.Prev[:], d.Next(uint64(len(l.Link.Prev))))
		copy(l.Link.Hash[:], d.Next(uint64(len(l.Link.Hash))))
	}
	if err := d.End(); err != nil {
		*l = LineRecord{}
		return err
	}
	return nil
}

// lineRecordV0 is the JSON form lines were stored in before format version
// 1: read, never written. testdata/records/log-v0.json is one.
type lineRecordV0 struct {
	ID         string    `json:"id"`
	TenantID   string    `json:"tenant_id"`
	ActorID    string    `json:"actor_id"`
	ActorType  string    `json:"actor_type"`
	EntityType string    `json:"entity_type"`
	EntityID   string    `json:"entity_id"`
	Operation  string    `json:"operation"`
	Message    string    `json:"message"`
	CreatedAt  time.Time `json:"created_at"`
}
