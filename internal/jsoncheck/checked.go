package jsoncheck

// Doc is a JSON value from a caller that has been checked (Scan: no string
// or key that would decode with a loss, no key given twice) and decoded
// once, numbers as json.Number. The HTTP layer makes one from a body and
// hands it to the Vault (through a parameter of type any), which then
// neither scans nor decodes the text again: it only holds the depth to its
// bound. Only code of this module can make one: the package is internal.
type Doc struct {
	value any
	depth int
}

// Checked is the Doc of a text that Scan found sound and measured depth
// deep, decoded as value; value is nil for a text left undecoded because
// it is deeper than its reader accepts (which the reader reports).
func Checked(value any, depth int) Doc { return Doc{value: value, depth: depth} }

// Value is the decoded value: plain JSON values (map[string]any, []any,
// string, json.Number, bool, nil).
func (d Doc) Value() any { return d.value }

// Depth is how deeply the text nests (Scan's depth).
func (d Doc) Depth() int { return d.depth }
