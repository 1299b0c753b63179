package transfer

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/jsontext"
)

// The CSV format: a header row naming the columns, then a token a row.
//
//   - id, type, fingerprint_expression, expires_at, created_at, subject:
//     as in the exchange format.
//   - data: the data as a string, or as JSON when the cell starts with {
//     or [ (an object or array). Or data.<field> columns instead, one a
//     field of an object (a card's data.number, data.expiration_month,
//     data.expiration_year, data.cvc; a bank's data.routing_number,
//     data.account_number); a card's expiration_month and expiration_year
//     are numbers.
//   - mask: an expression, or JSON when the cell starts with { or [.
//   - metadata.<key>: one column a metadata key.
//   - containers, search_indexes: a JSON array when the cell starts with
//     [, else values separated by ";" (spaces around them trimmed).
//   - The hosted service's read-only columns (tenant_id, fingerprint,
//     created_by, ...) are ignored; any other column refuses the file.
//
// An empty cell is an absent field. Line numbers are the file's lines
// where each row starts (the header is line 1).
type csvReader struct {
	cr      *csv.Reader
	columns []string
	base    int64 // the offset the csv.Reader started at
	lines   int64 // the file lines before base
	line    int64
	offset  int64
}

// cardNumbers are the data.<field> columns of a card read as numbers.
var cardNumbers = []string{"expiration_month", "expiration_year"}

func newCSVReader(f io.ReadSeeker, offset, line int64) (*csvReader, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	head := csv.NewReader(bufio.NewReader(f))
	columns, err := head.Read()
	if err != nil {
		return nil, fmt.Errorf("the CSV header row: %v", csvProblem(err))
	}
	for _, c := range columns {
		name, _, _ := strings.Cut(c, ".")
		if c == "" || !slices.Contains(knownFields, c) && !slices.Contains(ignoredFields, c) &&
			(name != "data" && name != "metadata" || !strings.Contains(c, ".")) {
			return nil, fmt.Errorf("the CSV header names an unknown column %s", quoteField(c))
		}
	}
	r := &csvReader{columns: columns, line: line}
	if offset == 0 {
		offset = head.InputOffset()
		r.lines = 1
	} else if r.lines, err = countLines(f, offset); err != nil {
		return nil, err
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	r.base, r.offset = offset, offset
	r.cr = csv.NewReader(bufio.NewReaderSize(f, 256<<10))
	r.cr.FieldsPerRecord = -1
	r.cr.ReuseRecord = true
	return r, nil
}

// countLines counts the line ends in the first n bytes of f.
func countLines(f io.ReadSeeker, n int64) (int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	var count int64
	buf := make([]byte, 64<<10)
	lr := io.LimitReader(f, n)
	for {
		k, err := lr.Read(buf)
		count += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return count, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

func (r *csvReader) Offset() int64 { return r.offset }
func (r *csvReader) Line() int64   { return r.line }

func (r *csvReader) Next() (Line, error) {
	rec, err := r.cr.Read()
	if err == io.EOF {
		return Line{}, err
	}
	r.offset = r.base + r.cr.InputOffset()
	var pe *csv.ParseError
	if err != nil && !errors.As(err, &pe) {
		return Line{}, err
	}
	var row int
	if pe != nil {
		row = pe.StartLine // FieldPos has no fields to tell of then
	} else {
		row, _ = r.cr.FieldPos(0)
	}
	r.line = r.lines + int64(row)
	if err != nil {
		return Line{Number: r.line, Problem: csvProblem(err)}, nil
	}
	if len(rec) != len(r.columns) {
		return Line{Number: r.line, Problem: fmt.Sprintf("has %d cells, the header %d", len(rec), len(r.columns))}, nil
	}
	return lineOfRow(r.columns, rec, r.line), nil
}

// csvProblem says what is wrong with a row without quoting it.
func csvProblem(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return "not valid CSV: " + pe.Err.Error()
	}
	return "not valid CSV"
}

// lineOfRow reads one row into the exchange format's object, then as a
// line of it (LineOf).
func lineOfRow(columns, rec []string, number int64) Line {
	obj := map[string]any{}
	var data map[string]any
	var metadata map[string]any
	for i, c := range columns {
		v := rec[i]
		if v == "" || slices.Contains(ignoredFields, c) {
			continue
		}
		if field, ok := strings.CutPrefix(c, "data."); ok {
			if data == nil {
				data = map[string]any{}
			}
			if slices.Contains(cardNumbers, field) && isDigits(v) {
				data[field] = json.Number(v)
			} else {
				data[field] = v
			}
			continue
		}
		if key, ok := strings.CutPrefix(c, "metadata."); ok {
			if metadata == nil {
				metadata = map[string]any{}
			}
			metadata[key] = v
			continue
		}
		switch c {
		case "data", "mask":
			if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
				j, err := jsontext.Decode([]byte(t))
				if err != nil {
					return Line{Number: number, Problem: c + ": not valid JSON"}
				}
				obj[c] = j
			} else {
				obj[c] = v
			}
		case "containers", "search_indexes":
			if t := strings.TrimSpace(v); strings.HasPrefix(t, "[") {
				j, err := jsontext.Decode([]byte(t))
				if err != nil {
					return Line{Number: number, Problem: c + ": not valid JSON"}
				}
				obj[c] = j
			} else {
				var list []any
				for _, s := range strings.Split(v, ";") {
					if s = strings.TrimSpace(s); s != "" {
						list = append(list, s)
					}
				}
				obj[c] = list
			}
		default:
			obj[c] = v
		}
	}
	if data != nil {
		if _, both := obj["data"]; both {
			return Line{Number: number, Problem: "data: given both whole and by data.<field> columns"}
		}
		obj["data"] = data
	}
	if metadata != nil {
		obj["metadata"] = metadata
	}
	return LineOf(obj, number)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
