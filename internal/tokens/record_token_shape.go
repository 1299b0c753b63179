package tokens

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of a token list shape (internal/tokens/listing, shapes.go): the
// type and the containers its registry entry stands for, at
// tenant/<tid>/token_shape/<hex of its keyed HMAC>, sealed with the
// tenant's keyring. Written once, by the commit that lists the shape's
// first token, and read by lists to learn which shapes a filter takes.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01             format version
//	str   type       the tokens' type
//	list  containers their containers, sorted, each once (str each)
//
// No version 0: shapes came after the binary records.
const ShapeFormat = 1

// ShapeRecord is a list shape: a type and a sorted set of containers.
type ShapeRecord struct {
	Type       string
	Containers []string
}

func (r *ShapeRecord) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return unit.AppendStrs0(unit.AppendStr(append(b, ShapeFormat), r.Type), r.Containers), nil
}

func (r *ShapeRecord) DecodeRecord(_ barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, ShapeFormat, "token shape")
	if err != nil {
		return err
	}
	*r = ShapeRecord{Type: d.Str(), Containers: d.Strs0()}
	if err := d.End(); err != nil {
		*r = ShapeRecord{}
		return err
	}
	return nil
}
