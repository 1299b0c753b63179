package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"

	"filippo.io/age"
)

// Writer encrypts a stream of exchange lines to one age recipient as it
// is written, and counts and hashes both sides: the NDJSON plaintext and
// the ciphertext written to the destination. It holds one line and age's
// chunk (64 KiB) at a time, whatever the stream's length.
type Writer struct {
	enc    io.WriteCloser
	plain  counter
	cipher counter
	count  int64
	buf    []byte
	closed bool
}

// Sums are what a Writer wrote: the number of lines and the size and
// SHA-256 (hex) of the plaintext and the ciphertext.
type Sums struct {
	Count            int64
	PlaintextSize    int64
	PlaintextSHA256  string
	CiphertextSize   int64
	CiphertextSHA256 string
}

// NewWriter starts the age file to recipient on dst (its header is
// written at once).
func NewWriter(dst io.Writer, recipient age.Recipient) (*Writer, error) {
	w := &Writer{plain: counter{h: sha256.New()}, cipher: counter{h: sha256.New(), w: dst}}
	enc, err := age.Encrypt(&w.cipher, recipient)
	if err != nil {
		return nil, err
	}
	w.enc = enc
	w.plain.w = enc
	return w, nil
}

// Write adds one line.
func (w *Writer) Write(l Line) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	w.buf = append(append(w.buf[:0], b...), '\n')
	if _, err := w.plain.Write(w.buf); err != nil {
		return err
	}
	w.count++
	return nil
}

// Close finishes the age file (its last chunk) and returns the sums.
func (w *Writer) Close() (Sums, error) {
	if !w.closed {
		w.closed = true
		if err := w.enc.Close(); err != nil {
			return w.Sums(), err
		}
	}
	return w.Sums(), nil
}

// Sums are the sums of what was written so far (of a stream cut short:
// Close was not called, or failed).
func (w *Writer) Sums() Sums {
	return Sums{
		Count:         w.count,
		PlaintextSize: w.plain.n, PlaintextSHA256: hex.EncodeToString(w.plain.h.Sum(nil)),
		CiphertextSize: w.cipher.n, CiphertextSHA256: hex.EncodeToString(w.cipher.h.Sum(nil)),
	}
}

// counter writes to w and hashes and counts what w accepted.
type counter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}
