package tokenvault

import "github.com/tokenvault/tokenvault/internal/jsontext"

// A caller's JSON is read by internal/jsontext. These are its names as
// the features still in this package call them; a feature that moves to
// a package of its own calls jsontext directly.

// MaxJSONDepth (64) bounds the nesting of every JSON document the Vault reads
// (bodies, token data, arguments, patches): deeper documents are refused
// before any work is done on them.
const MaxJSONDepth = jsontext.MaxDepth

func refused(err error) bool                   { return jsontext.Refused(err) }
func decodeJSON(b []byte) (any, error)         { return jsontext.Decode(b) }
func decodeJSONLastWins(b []byte) (any, error) { return jsontext.DecodeLastWins(b) }
