package transfer

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// MaxLineBytes bounds one line of the exchange format (1 MiB): a token's
// data is far smaller, and a reader must not hold an unbounded line.
const MaxLineBytes = 1 << 20

// DecodeNDJSON reads a batch of the exchange format from r: one JSON
// object a line, empty lines skipped (and counted), the first line
// numbered firstLine (1 when it is 0 or less). A line that does not decode
// is in the batch with its Problem.
//
// Returns Invalid for more than MaxBatch lines or a line longer than
// MaxLineBytes; read errors of r as they are.
func DecodeNDJSON(r io.Reader, firstLine int64) ([]Line, error) {
	if firstLine <= 0 {
		firstLine = 1
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var lines []Line
	for n := firstLine; ; n++ {
		b, err := readLine(br)
		if len(bytes.TrimSpace(b)) > 0 {
			if len(lines) == MaxBatch {
				return nil, unit.Errorf(unit.Invalid, "a batch may hold at most %d lines", MaxBatch)
			}
			lines = append(lines, DecodeLine(b, n))
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// errLineTooLong is the answer to a line longer than MaxLineBytes.
var errLineTooLong = unit.Errorf(unit.Invalid, "a line may hold at most %d bytes", MaxLineBytes)

// readLine reads one line without its end ("\n" or "\r\n"), refusing one
// longer than MaxLineBytes. It returns io.EOF with the last line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLineBytes+2 {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		return line, err
	}
}
