package auditchain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// An export line is accepted only in its canonical form: the bytes
// encoding/json's Marshal writes for the event it decodes to (the form the
// vault's sinks write, tokenvault.AuditEvent), byte for byte. A reader of
// JSON may resolve a key given twice, or in another case, in its own way
// (encoding/json matches keys case-insensitively and keeps the last;
// others keep the first, or refuse), so an event that could be read two
// ways is refused; and an event that re-encodes to itself holds each of
// its fields once, under its own name, with nothing else: what the
// verifier hashes is what every reader sees. The checks before the
// comparison (duplicate and case-variant keys, unknown fields) only name
// what is wrong more clearly; the comparison is what makes it hold.

// lineFields and checkpointFields are the keys of a line's event and of
// a checkpoint, in the order the canonical form writes them.
var (
	lineFields = []string{"schema", "id", "tenant_id", "actor_id", "actor_type", "entity_type", "entity_id",
		"operation", "message", "created_at", "transform", "channel", "application", "seq", "prev_hash", "hash", "checkpoint"}
	checkpointFields = []string{"tenant_id", "seq", "hash", "created_at", "key_id", "final", "signature"}
)

// ErrNotCanonical is wrapped by the *ExportError of a line that is not
// in its canonical form: a key given twice or in another case, a field
// the format does not have, or another encoding of the event (key order,
// white space, escapes, number or time formats).
var ErrNotCanonical = errors.New("not in canonical form")

// checkKeys reports a key of the JSON object b that is given twice
// (compared as encoding/json compares them: case-insensitively), or that
// is not one of fields; nested is the keys of the object under
// "checkpoint", checked the same way. where prefixes the keys named in
// errors ("checkpoint."). It returns the keys present.
func checkKeys(b []byte, fields, nested []string, where string) (map[string]bool, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	if _, err := d.Token(); err != nil { // {
		return nil, err
	}
	seen := map[string]string{} // field name → the key that set it
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		name := ""
		for _, f := range fields {
			if strings.EqualFold(key, f) {
				name = f
				break
			}
		}
		switch prev, dup := seen[name]; {
		case name == "":
			return nil, fmt.Errorf("%w: unknown field %q", ErrNotCanonical, where+key)
		case dup && prev == key:
			return nil, fmt.Errorf("%w: duplicate key %q", ErrNotCanonical, where+key)
		case dup:
			return nil, fmt.Errorf("%w: keys %q and %q both name the field %q", ErrNotCanonical, where+prev, where+key, where+name)
		case key != name:
			return nil, fmt.Errorf("%w: key %q is spelt %q in the format", ErrNotCanonical, where+key, where+name)
		}
		seen[name] = key
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, err
		}
		if name == "checkpoint" && nested != nil && len(raw) > 0 && raw[0] == '{' {
			if _, err := checkKeys(raw, nested, nil, where+name+"."); err != nil {
				return nil, err
			}
		}
	}
	present := make(map[string]bool, len(seen))
	for name := range seen {
		present[name] = true
	}
	return present, nil
}

// requireCanonical returns nil if line is the canonical encoding of ev
// (its times in UTC), or an error wrapping ErrNotCanonical that shows
// where they first differ.
func requireCanonical(line []byte, ev *Event) error {
	c := *ev
	c.CreatedAt = c.CreatedAt.UTC()
	if ev.Checkpoint != nil {
		cp := *ev.Checkpoint
		cp.CreatedAt = cp.CreatedAt.UTC()
		c.Checkpoint = &cp
	}
	want, err := json.Marshal(&c)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotCanonical, err)
	}
	if bytes.Equal(line, want) {
		return nil
	}
	i := 0
	for i < len(line) && i < len(want) && line[i] == want[i] {
		i++
	}
	return fmt.Errorf("%w at byte %d: %q, where the canonical encoding has %q", ErrNotCanonical, i+1, excerpt(line, i), excerpt(want, i))
}

// excerpt is up to 24 bytes of b from i, a few before it for context.
func excerpt(b []byte, i int) string {
	from := max(i-8, 0)
	to := min(i+16, len(b))
	if from >= to {
		return ""
	}
	return string(b[from:to])
}

// checkpointEvent is the canonical event of checkpoint c: the one the
// vault exports, whose id, tenant and time are c's.
func checkpointEvent(c *Checkpoint) Event {
	id := fmt.Sprintf("checkpoint-%s-%016x", c.TenantID, c.Seq)
	if c.Final {
		id += "-final"
	}
	return Event{Schema: CheckpointSchema, ID: id, TenantID: c.TenantID, CreatedAt: c.CreatedAt, Checkpoint: c}
}

// Event is one exported audit event: a line of a tenant's log with its
// link in the chain (Schema LineSchema), or a signed checkpoint
// (CheckpointSchema, with Checkpoint set and the line's fields empty but
// ID, TenantID and CreatedAt). tokenvault.AuditEvent is this type, which
// documents the JSON form. Its fields, their order and their omitempty
// are the canonical form that ReadExport accepts byte for byte.
type Event struct {
	Schema     string    `json:"schema"`
	ID         string    `json:"id"`
	TenantID   string    `json:"tenant_id"`
	ActorID    string    `json:"actor_id"`
	ActorType  string    `json:"actor_type"`
	EntityType string    `json:"entity_type"`
	EntityID   string    `json:"entity_id"`
	Operation  string    `json:"operation"`
	Message    string    `json:"message"`
	CreatedAt  time.Time `json:"created_at"`
	// Transform, Channel and Application are set on a line recording
	// an access to a token's data (tokenvault.Vault.TokenAccess).
	Transform   string `json:"transform,omitempty"`
	Channel     string `json:"channel,omitempty"`
	Application string `json:"application,omitempty"`
	// Purpose is the purpose of access the call named, on such a line.
	Purpose string `json:"purpose,omitempty"`
	// Seq, PrevHash and Hash are the line's chain link; zero and nil on
	// a line written before its tenant's chain began, and on a
	// checkpoint.
	Seq      uint64 `json:"seq,omitempty"`
	PrevHash *Hash  `json:"prev_hash,omitempty"`
	Hash     *Hash  `json:"hash,omitempty"`
	// Checkpoint is set on a checkpoint event, and only there.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}
