package auditchain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The schemas of an audit export's events (the JSON objects a Token
// Vault's audit sinks carry, tokenvault.AuditEvent).
const (
	// LineSchema is a log line's event.
	LineSchema = "tokenvault.audit/v1"
	// CheckpointSchema is a checkpoint's event: its "checkpoint" member
	// is a Checkpoint's JSON.
	CheckpointSchema = "tokenvault.audit.checkpoint/v1"
)

// MaxExportLine bounds one line of an export stream, in bytes: an event
// is well under a kilobyte, so a longer line is not one.
const MaxExportLine = 1 << 20

// ExportError is a line of an export stream that is not an event:
// ReadExport and VerifyExport stop at the first.
type ExportError struct {
	// Line is its line number in the stream, from 1.
	Line int
	Err  error
}

func (e *ExportError) Error() string {
	return fmt.Sprintf("auditchain: export line %d: %v", e.Line, e.Err)
}

func (e *ExportError) Unwrap() error { return e.Err }

// ReadExport adds to v every chained line and every checkpoint of v's
// tenant in r, an audit export stream: one JSON event a line, as the
// file sink of package auditexport writes (tokenvault.AuditEvent, schema
// LineSchema or CheckpointSchema), the events of several tenants mixed,
// in any order, duplicates and all. Events of other tenants are skipped;
// lines of the tenant that carry no seq are not on the chain and are
// added with AddUnchained (written before the tenant's chain began, or
// inserted); blank lines are allowed. It returns the number of the tenant's
// events it added.
//
// Every other line, of whichever tenant, must be an event in its
// canonical form, byte for byte: the JSON encoding/json's Marshal writes
// for it (the form the vault's sinks write), with no white space around
// it, and a checkpoint's event must be the one the vault writes for that
// checkpoint (its id, tenant_id and created_at are the checkpoint's). So
// a key given twice or in another case, a field the format does not
// have, or any other encoding of an event (key order, white space,
// escapes, number or time formats, a "\r" before the newline) is refused:
// what is hashed is exactly what any JSON reader sees.
//
// A line that is not such an event (not a JSON object, not canonical
// (ErrNotCanonical), another schema, a bad hash or time, a chained line
// without its hashes, a checkpoint event without its checkpoint, longer
// than MaxExportLine) stops the reading with an *ExportError naming its
// line number; what was added before it stays added. An error reading r
// is returned as it is.
func (v *Verifier) ReadExport(r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), MaxExportLine)
	sc.Split(splitLines)
	n, added := 0, 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		ok, err := v.addEvent(b)
		if err != nil {
			return added, &ExportError{Line: n, Err: err}
		}
		if ok {
			added++
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return added, &ExportError{Line: n + 1, Err: fmt.Errorf("longer than %d bytes", MaxExportLine)}
		}
		return added, err
	}
	return added, nil
}

// splitLines splits at each newline, keeping a "\r" before it in the
// line (bufio.ScanLines drops it): a line is its bytes as they are.
func splitLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// addEvent adds the event b if it is of v's tenant, and reports whether
// it did. b must be canonical (ReadExport).
func (v *Verifier) addEvent(b []byte) (bool, error) {
	if b[0] != '{' {
		return false, errors.New("not a JSON object")
	}
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return false, err
	}
	// The event a checkpoint's line must be is derived from the
	// checkpoint alone: its id, tenant_id and created_at say what the
	// signed checkpoint says, and nothing else.
	want, other := &ev, ""
	if ev.Schema == CheckpointSchema && ev.Checkpoint != nil {
		cp := checkpointEvent(ev.Checkpoint)
		want, other = &cp, "a checkpoint event other than the checkpoint's own: "
	}
	if err := requireCanonical(b, want); err != nil {
		// Say what is wrong as precisely as can be: a key, then the
		// content, then the encoding.
		present, kerr := checkKeys(b, lineFields, checkpointFields, "")
		if kerr != nil {
			return false, kerr
		}
		if cerr := checkEvent(&ev, present["created_at"]); cerr != nil {
			return false, cerr
		}
		return false, fmt.Errorf("%s%w", other, err)
	}
	// Canonical: created_at is there (it is never omitted).
	if err := checkEvent(&ev, true); err != nil {
		return false, err
	}
	switch {
	case ev.Schema == CheckpointSchema:
		if ev.Checkpoint.TenantID != v.tenant {
			return false, nil
		}
		v.AddCheckpoint(*ev.Checkpoint)
		return true, nil
	case ev.TenantID != v.tenant:
		return false, nil // another tenant's
	case ev.Seq == 0:
		// No link: written before the chain began, or inserted
		// (Verifier.AddUnchained tells).
		v.AddUnchained(ev.ID, ev.CreatedAt)
		return false, nil
	}
	v.AddLine(Entry{Seq: ev.Seq, Prev: *ev.PrevHash, Hash: *ev.Hash, Line: ev.Line()})
	return true, nil
}

// checkEvent returns what makes ev no event of the export: its schema, a
// line without created_at (hasCreatedAt) or with part of its link, a
// checkpoint event without its checkpoint.
func checkEvent(ev *Event, hasCreatedAt bool) error {
	switch ev.Schema {
	case LineSchema:
		if !hasCreatedAt {
			return errors.New("a line without created_at")
		}
		if ev.Seq == 0 && ev.PrevHash == nil && ev.Hash == nil {
			return nil // written before the chain began: not on it
		}
		if ev.Seq == 0 || ev.PrevHash == nil || ev.Hash == nil {
			return errors.New("a chained line needs seq (from 1), prev_hash and hash")
		}
		return nil
	case CheckpointSchema:
		if ev.Checkpoint == nil {
			return errors.New("a checkpoint event without its checkpoint")
		}
		return nil
	case "":
		return errors.New("no schema")
	default:
		return fmt.Errorf("unknown schema %q", ev.Schema)
	}
}

// ErrTenantNotInExport is VerifyExport's error for a stream that holds no
// chained line and no checkpoint of the tenant: there is nothing to
// verify (a mistyped tenant id, a copy of another sink, a copy taken
// before anything was delivered), which is not a chain that verifies.
var ErrTenantNotInExport = errors.New("auditchain: the export holds no chained line and no checkpoint of the tenant")

// VerifyExport verifies tenant tenantID's chain from r, an audit export
// stream (see Verifier.ReadExport), trusting the checkpoint signing keys
// keys (the vault's published keys, GET /audit/keys). expectFirst is the
// sequence number the copy must start at (Verifier.ExpectFirst): 1 for
// an export taken since the tenant was created, 0 to accept wherever it
// starts (but not a copy missing the lines its checkpoints vouch for,
// which a copy with every line removed is).
//
// A report with problems is not an error: the error is for a stream that
// cannot be read (an *ExportError with the line number, or r's error),
// or that holds nothing of the tenant (ErrTenantNotInExport), and then
// there is no report.
func VerifyExport(r io.Reader, tenantID string, keys []PublicKey, expectFirst uint64) (*Report, error) {
	v := NewVerifier(tenantID, keys)
	v.ExpectFirst = expectFirst
	n, err := v.ReadExport(r)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w %s", ErrTenantNotInExport, tenantID)
	}
	return v.Report(), nil
}
