package transfer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tokenvault/tokenvault/internal/jsontext"
)

// The hosted format: the export of the best-known hosted service of this
// kind, a JSON array of its token objects, or its list answer
// {"data": [...], "pagination": {...}}. It is streamed with
// json.Decoder.Token, one token object at a time, never read whole. Its
// token objects have the exchange format's fields and read-only ones
// (ignored); a token with no containers but the older "privacy"
// {classification, impact_level} goes to /<classification>/<impact_level>/,
// where that service placed it. Line numbers are the tokens' positions in
// the array (1 for the first).
type hostedReader struct {
	dec    *json.Decoder
	line   int64
	offset int64
	done   bool
}

// errHostedShape is the answer to a file that is neither shape.
var errHostedShape = errors.New(`the hosted export must be a JSON array of tokens, or an object with "data": [...]`)

func newHostedReader(f io.ReadSeeker, line int64) (*hostedReader, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	r := &hostedReader{dec: json.NewDecoder(bufio.NewReaderSize(f, 256<<10))}
	r.dec.UseNumber()
	if err := r.openArray(); err != nil {
		return nil, err
	}
	// Resume: the tokens before line were sent; read past them.
	for r.line < line {
		var skip json.RawMessage
		if !r.dec.More() {
			return nil, fmt.Errorf("the hosted export holds %d tokens, fewer than the %d of the state", r.line, line)
		}
		if err := r.dec.Decode(&skip); err != nil {
			return nil, fmt.Errorf("the hosted export, token %d: %v", r.line+1, err)
		}
		r.line++
	}
	r.offset = r.dec.InputOffset()
	return r, nil
}

// openArray reads up to the first token of the array of tokens: the top
// array, or the array of the top object's "data" (its other members
// skipped).
func (r *hostedReader) openArray() error {
	t, err := r.dec.Token()
	if err != nil {
		return errHostedShape
	}
	switch t {
	case json.Delim('['):
		return nil
	case json.Delim('{'):
		for r.dec.More() {
			k, err := r.dec.Token()
			if err != nil {
				return errHostedShape
			}
			if k == "data" {
				if t, err := r.dec.Token(); err != nil || t != json.Delim('[') {
					return errHostedShape
				}
				return nil
			}
			var skip json.RawMessage
			if err := r.dec.Decode(&skip); err != nil {
				return errHostedShape
			}
		}
	}
	return errHostedShape
}

func (r *hostedReader) Offset() int64 { return r.offset }
func (r *hostedReader) Line() int64   { return r.line }

func (r *hostedReader) Next() (Line, error) {
	if r.done || !r.dec.More() {
		r.done = true
		return Line{}, io.EOF
	}
	var raw json.RawMessage
	if err := r.dec.Decode(&raw); err != nil {
		return Line{}, fmt.Errorf("the hosted export, token %d: not valid JSON", r.line+1)
	}
	r.line++
	r.offset = r.dec.InputOffset()
	if len(raw) > MaxLineBytes {
		return Line{Number: r.line, Problem: fmt.Sprintf("longer than %d bytes", MaxLineBytes)}, nil
	}
	v, err := jsontext.Decode(raw)
	if err != nil {
		return Line{Number: r.line, Problem: "not valid JSON" + detail(err)}, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return Line{Number: r.line, Problem: "not a JSON object"}, nil
	}
	if _, ok := obj["containers"]; !ok {
		if p, ok := obj["privacy"].(map[string]any); ok {
			c, _ := p["classification"].(string)
			l, _ := p["impact_level"].(string)
			if c != "" && l != "" {
				obj["containers"] = []any{"/" + c + "/" + l + "/"}
			}
		}
	}
	return LineOf(obj, r.line), nil
}
