package listing

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// sealedCursorPrefix marks a cursor position sealed with the tenant's
// keys: one that stops on a token the caller was not shown, whose id and
// creation time it must not read.
const sealedCursorPrefix = "~"

// packPosition is the position of a token created at at with id id in
// the list indexes. A position is packed: the creation time as 8 bytes
// of big-endian Unix nanoseconds (so byte order is time order, as
// barrier.TimeKey's), then the id: a canonical UUID (every generated id)
// as a zero byte and its 16 bytes, any other id as it is (a custom id
// holds no control character, so never begins with a zero byte). 25
// bytes for a generated id instead of the 53 of its text; within one
// nanosecond, generated ids come before custom ones. Cursors keep the
// text form, <16 hex digits>/<id> (cursorPosition), so cursors handed
// out before positions were packed still open.
func packPosition(at time.Time, id string) string {
	b := make([]byte, 8, 8+17)
	binary.BigEndian.PutUint64(b, uint64(barrier.UnixNanos(at)))
	if u, ok := barrier.ParseUUID(id); ok {
		b = append(b, 0)
		b = append(b, u[:]...)
	} else {
		b = append(b, id...)
	}
	return string(b)
}

// recPosition is the packed position of a record in the token lists.
func recPosition(rec *tokens.Record) string { return packPosition(rec.CreatedAt, rec.ID) }

// positionID is the id a packed position names; false when pos is not
// one.
func positionID(pos string) (string, bool) {
	if len(pos) <= 8 {
		return "", false
	}
	id := pos[8:]
	if id[0] != 0 {
		return id, true
	}
	if len(id) != 17 {
		return "", false
	}
	return uuid.UUID([]byte(id[1:])).String(), true
}

// cursorPosition is the text form of a packed position, which cursors
// carry: <16 hex digits>/<id>, as the root's tokenPosition renders a
// token's.
func cursorPosition(pos string) string {
	id, _ := positionID(pos)
	return hex.EncodeToString([]byte(pos[:8])) + "/" + id
}

// packCursor is the packed position a cursor's text names; false when it
// names none.
func packCursor(c string) (string, bool) {
	if len(c) < 18 || c[16] != '/' {
		return "", false
	}
	var b [8]byte
	if _, err := hex.Decode(b[:], []byte(c[:16])); err != nil || hex.EncodeToString(b[:]) != c[:16] {
		return "", false
	}
	id := c[17:]
	if u, ok := barrier.ParseUUID(id); ok {
		return string(b[:]) + "\x00" + string(u[:]), true
	}
	return string(b[:]) + id, true
}

// sealCursor seals a position the caller may not read (that of a token
// it was not shown) into a cursor position only this tenant's keys open.
func sealCursor(ks *barrier.Keys, tid, pos string) string {
	ct := ks.Ring().Seal([]byte(barrier.Tenant(tid).CursorSeal().String()), []byte(pos))
	return sealedCursorPrefix + base64.RawURLEncoding.EncodeToString(ct)
}

// openCursor returns the position a decoded cursor names: itself, or
// what a sealed one holds. A sealed cursor that does not open (another
// tenant's, or altered) is Invalid, naming start.
func openCursor(ks *barrier.Keys, tid, pos string) (string, error) {
	rest, sealed := strings.CutPrefix(pos, sealedCursorPrefix)
	if !sealed {
		return pos, nil
	}
	bad := unit.InvalidField("start", "is not a cursor returned by this list (pagination.after)")
	ct, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return "", bad
	}
	pt, err := ks.Ring().Open([]byte(barrier.Tenant(tid).CursorSeal().String()), ct)
	if err != nil || len(pt) == 0 {
		return "", bad
	}
	return string(pt), nil
}
