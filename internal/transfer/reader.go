package transfer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// The formats a Reader reads.
const (
	FormatNDJSON = "ndjson"
	FormatCSV    = "csv"
	FormatHosted = "hosted"
)

// Formats lists the formats in the order the CLI documents them.
var Formats = []string{FormatNDJSON, FormatCSV, FormatHosted}

// A Reader reads the lines of an import file one at a time, in bounded
// memory whatever the file's size. Next returns io.EOF after the last
// line; a line it could not read has its Problem set (the run rejects it
// and carries on); any other error stops the run. Offset is the byte
// offset just past the last line Next returned, and Line its number: a
// run that stops there resumes with NewReader(format, f, Offset(),
// Line()).
type Reader interface {
	Next() (Line, error)
	Offset() int64
	Line() int64
}

// NewReader reads f in format, from offset and line (0, 0 for the
// start), where an earlier Reader of the same file stopped.
func NewReader(format string, f io.ReadSeeker, offset, line int64) (Reader, error) {
	switch format {
	case FormatNDJSON:
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil, err
		}
		return &ndjsonReader{br: bufio.NewReaderSize(f, 256<<10), offset: offset, line: line}, nil
	case FormatCSV:
		return newCSVReader(f, offset, line)
	case FormatHosted:
		return newHostedReader(f, line)
	}
	return nil, fmt.Errorf("unknown format %q: want ndjson, csv or hosted", format)
}

// NewRawReader is NewReader, but a line of NDJSON is passed on as it is
// (Line.Raw), not decoded: the CLI sends it to a vault, which decodes it;
// other formats are read into the exchange format as NewReader does.
func NewRawReader(format string, f io.ReadSeeker, offset, line int64) (Reader, error) {
	r, err := NewReader(format, f, offset, line)
	if nr, ok := r.(*ndjsonReader); ok {
		nr.raw = true
	}
	return r, err
}

// ndjsonReader reads the exchange format itself: a line a token, empty
// lines skipped (but counted).
type ndjsonReader struct {
	// raw passes lines on undecoded (Line.Raw): NewRawReader.
	raw    bool
	br     *bufio.Reader
	offset int64
	line   int64
	buf    []byte
}

func (r *ndjsonReader) Offset() int64 { return r.offset }
func (r *ndjsonReader) Line() int64   { return r.line }

func (r *ndjsonReader) Next() (Line, error) {
	for {
		b, n, tooLong, err := r.readLine()
		if n == 0 && err != nil {
			return Line{}, err
		}
		r.offset += n
		r.line++
		if tooLong {
			return Line{Number: r.line, Problem: fmt.Sprintf("longer than %d bytes", MaxLineBytes)}, nil
		}
		if len(bytes.TrimSpace(b)) == 0 {
			if err != nil {
				return Line{}, err
			}
			continue
		}
		if r.raw {
			return Line{Number: r.line, Raw: bytes.Clone(b)}, nil
		}
		return DecodeLine(b, r.line), nil
	}
}

// readLine reads one line (without its end) and how many bytes it took
// with its end. A line longer than MaxLineBytes is read to its end but
// not kept (tooLong).
func (r *ndjsonReader) readLine() (line []byte, n int64, tooLong bool, err error) {
	r.buf = r.buf[:0]
	for {
		chunk, e := r.br.ReadSlice('\n')
		n += int64(len(chunk))
		if !tooLong {
			if len(r.buf)+len(chunk) > MaxLineBytes+2 {
				tooLong, r.buf = true, r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		if errors.Is(e, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(r.buf, "\r\n"), n, tooLong, e
	}
}
