package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/jsoncheck"
	"github.com/tokenvault/tokenvault/internal/jsontext"
)

// A caller's JSON is read by internal/jsontext. These are its names as
// the features still in this package call them; a feature that moves to
// a package of its own calls jsontext directly.

// MaxJSONDepth (64) bounds the nesting of every JSON document the Vault reads
// (bodies, token data, arguments, patches): deeper documents are refused
// before any work is done on them.
const MaxJSONDepth = jsontext.MaxDepth

var errTooDeep = jsontext.ErrTooDeep

func jsonCheckError(e *jsoncheck.Error, prefix string) error { return jsontext.CheckError(e, prefix) }
func checkGoText(v any, prefix string) error                 { return jsontext.CheckGoText(v, prefix) }
func refused(err error) bool                                 { return jsontext.Refused(err) }
func join(path, field string) string                         { return jsontext.Field(path, field) }
func decodeJSON(b []byte) (any, error)                       { return jsontext.Decode(b) }
func decodeJSONLastWins(b []byte) (any, error)               { return jsontext.DecodeLastWins(b) }
func decodeScanned(b []byte) (any, error)                    { return jsontext.DecodeScanned(b) }
func normalizeJSON(v any) (any, error)                       { return jsontext.Normalize(v) }
func docValue(d jsoncheck.Doc) (any, error)                  { return jsontext.DocValue(d) }
func plainCopy(v any) (any, bool)                            { return jsontext.PlainCopy(v) }
