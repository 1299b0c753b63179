package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"filippo.io/age"
	"github.com/tokenvault/tokenvault/auditchain"
)

// The ways an export fails verification (Verify), besides ErrBadSignature.
var (
	// ErrCiphertext: the file is not the one the manifest describes (its
	// size or SHA-256 differ): changed, cut short or another export's.
	ErrCiphertext = errors.New("export: the file's SHA-256 or size is not the manifest's")
	// ErrPlaintext: decrypted, the file does not hold what the manifest
	// says (its line count, size or SHA-256 differ, or a line is not a
	// token object).
	ErrPlaintext = errors.New("export: the decrypted file is not what the manifest describes")
	// ErrDecrypt: the identities do not open the file (not the
	// recipient's), or its encryption is damaged.
	ErrDecrypt = errors.New("export: the file does not decrypt with the identity given")
)

// Verified is what Verify checked.
type Verified struct {
	// Signature: the manifest is signed by the key it names, one of the
	// vault's. Ciphertext: the file is the one it describes.
	Signature, Ciphertext bool
	// Plaintext: decrypted, the file holds Count lines with the
	// manifest's SHA-256 (only with identities).
	Plaintext bool
	Count     int64
}

// Verify checks an export: m's signature with keys (the vault's published
// audit keys), that file (the age ciphertext) has m's size and SHA-256,
// and, given identities, that it decrypts to m's count of lines, each a
// token object, with m's plaintext size and SHA-256. It reads file once,
// holding at most its longest line.
//
// It returns what it checked and the first failure: ErrBadSignature,
// ErrCiphertext, ErrDecrypt, ErrPlaintext (wrapped, with what differs), or
// a read error of file.
func Verify(m *Manifest, keys []auditchain.PublicKey, file io.Reader, identities ...age.Identity) (*Verified, error) {
	out := &Verified{}
	if m.Format != Format {
		return out, fmt.Errorf("export: the manifest's format is %q, not %q", m.Format, Format)
	}
	if err := m.VerifySignature(keys); err != nil {
		return out, err
	}
	out.Signature = true
	cipher := counter{w: io.Discard, h: sha256.New()}
	src := io.TeeReader(file, &cipher)
	var plainErr error
	if len(identities) > 0 {
		out.Count, plainErr = checkPlaintext(m, src, identities)
	}
	// The ciphertext hash covers the whole file, read or not.
	if _, err := io.Copy(io.Discard, src); err != nil {
		return out, err
	}
	if cipher.n != m.CiphertextSize || hex.EncodeToString(cipher.h.Sum(nil)) != m.CiphertextSHA256 {
		return out, ErrCiphertext
	}
	out.Ciphertext = true
	if len(identities) == 0 {
		return out, nil
	}
	if plainErr != nil {
		return out, plainErr
	}
	out.Plaintext = true
	return out, nil
}

// checkPlaintext decrypts src and checks its lines against m.
func checkPlaintext(m *Manifest, src io.Reader, identities []age.Identity) (int64, error) {
	dec, err := age.Decrypt(src, identities...)
	if err != nil {
		return 0, ErrDecrypt
	}
	plain := counter{w: io.Discard, h: sha256.New()}
	r := bufio.NewReaderSize(io.TeeReader(dec, &plain), 64<<10)
	var count int64
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer (a token's data may be
			// large): copied before the buffer is read into again.
			long := bytes.Clone(line)
			for err == bufio.ErrBufferFull {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			if err := checkLine(line); err != nil {
				return count, fmt.Errorf("%w: line %d: %v", ErrPlaintext, count+1, err)
			}
			count++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return count, fmt.Errorf("%w: %v", ErrDecrypt, err)
		}
	}
	switch {
	case count != m.Count:
		return count, fmt.Errorf("%w: %d lines, the manifest says %d", ErrPlaintext, count, m.Count)
	case plain.n != m.PlaintextSize || hex.EncodeToString(plain.h.Sum(nil)) != m.PlaintextSHA256:
		return count, fmt.Errorf("%w: its SHA-256 or size differs", ErrPlaintext)
	}
	return count, nil
}

// checkLine checks that a line is a token object with an id and a type,
// ending in a newline; it never repeats the line's content.
func checkLine(line []byte) error {
	if line[len(line)-1] != '\n' {
		return errors.New("does not end in a newline")
	}
	var l struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return errors.New("is not a JSON object")
	}
	if l.ID == "" || l.Type == "" || len(l.Data) == 0 {
		return errors.New("lacks id, type or data")
	}
	return nil
}
