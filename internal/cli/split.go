package cli

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/keywrap/shamir"
)

// The split root of trust (-seal split): the root key (32 bytes, the key
// of a local key wrapper) exists only as n Shamir shares, each encrypted
// to one custodian's age recipient; k of them open the store. The data
// directory keeps only the public description of the split (split.json):
// k, n, each custodian's name and recipient, and the key's id
// (tokenvault.LocalKeyID), the check value that tells the right key from
// a wrong one and reveals nothing about it.
//
// A share's plaintext (what age decrypts a share file into, and what
// POST /operator/unseal takes) is two lines: a header naming the key id,
// k, n and the share's number, then the share (x coordinate and 32 bytes)
// in standard base64. The base64 line alone is accepted too.

const (
	splitFileName    = "split.json"
	pendingSplitFile = "split.json.new" // of an interrupted rotate-master-key -to split
	shareHeader      = "tokenvault split share v1"
	rootKeySize      = 32
)

// splitDescription is split.json: public, no secret in it.
type splitDescription struct {
	KeyID      string      `json:"key_id"`
	K          int         `json:"k"`
	N          int         `json:"n"`
	Custodians []custodian `json:"custodians"`
}

// A custodian holds share X, encrypted to Recipient.
type custodian struct {
	X         int    `json:"x"`
	Name      string `json:"name"`
	Recipient string `json:"recipient"`
}

// readSplitDescription reads <dir>/<name> (split.json or split.json.new).
func readSplitDescription(path string) (splitDescription, error) {
	var d splitDescription
	b, err := os.ReadFile(path)
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("%s: %w", path, err)
	}
	if d.K < 2 || d.K > d.N || d.N != len(d.Custodians) || !keyIDPattern.MatchString(d.KeyID) {
		return d, fmt.Errorf("%s does not describe a split (k %d of n %d, %d custodians)", path, d.K, d.N, len(d.Custodians))
	}
	return d, nil
}

// writeSplitDescription writes d to path whole (a temporary file synced,
// then renamed), 0644: it is public.
func writeSplitDescription(path string, d splitDescription) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// checks reports whether key is the root key d describes, comparing the
// key ids in constant time.
func (d splitDescription) checks(key []byte) bool {
	id, err := tokenvault.LocalKeyID(key)
	return err == nil && subtle.ConstantTimeCompare([]byte(id), []byte(d.KeyID)) == 1
}

// keyIDPattern is a local key id: 8 hex digits.
var keyIDPattern = regexp.MustCompile(`^[0-9a-f]{8}$`)

var custodianName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// readRecipients reads a custodians file: one custodian a line, "NAME
// age1..." or a bare "age1..." (named custodian-<x>); blank lines and
// lines starting with # are skipped.
func readRecipients(path string) ([]custodian, []age.Recipient, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var cs []custodian
	var rs []age.Recipient
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		c := custodian{X: len(cs) + 1}
		switch len(fields) {
		case 1:
			c.Name, c.Recipient = "custodian-"+strconv.Itoa(c.X), fields[0]
		case 2:
			c.Name, c.Recipient = fields[0], fields[1]
		default:
			return nil, nil, fmt.Errorf("%s:%d: want NAME and an age recipient (age1...), or the recipient alone", path, line)
		}
		if !custodianName.MatchString(c.Name) {
			return nil, nil, fmt.Errorf("%s:%d: a custodian's name is letters, digits, dot, dash and underscore (at most 64)", path, line)
		}
		r, err := age.ParseX25519Recipient(c.Recipient)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: not an age X25519 recipient (age1...): %w", path, line, err)
		}
		if seen[c.Name] || seen[c.Recipient] {
			return nil, nil, fmt.Errorf("%s:%d: custodian %s or its recipient is listed twice: each custodian holds one share", path, line, c.Name)
		}
		seen[c.Name], seen[c.Recipient] = true, true
		cs = append(cs, c)
		rs = append(rs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if len(cs) < 2 || len(cs) > shamir.MaxShares {
		return nil, nil, fmt.Errorf("%s lists %d custodians: a split needs 2 to %d", path, len(cs), shamir.MaxShares)
	}
	return cs, rs, nil
}

// shareFileName is the name of custodian c's share file.
func shareFileName(c custodian, keyID string) string {
	return fmt.Sprintf("%s.%s.share.age", c.Name, keyID)
}

// newSplit makes a random root key, splits it k of len(cs) and writes
// each share, encrypted (armored) to its custodian's recipient, to
// outDir (created 0700 if missing; a file there is never replaced). It
// returns the key (the caller uses, then clears it), the description,
// and the files written.
func newSplit(k int, cs []custodian, rs []age.Recipient, outDir string) (key []byte, d splitDescription, files []string, err error) {
	key = make([]byte, rootKeySize)
	rand.Read(key)
	d, files, err = writeShares(key, k, cs, rs, outDir)
	if err != nil {
		clear(key)
		return nil, d, nil, err
	}
	return key, d, files, nil
}

// writeShares splits key k of len(cs) and writes the share files.
func writeShares(key []byte, k int, cs []custodian, rs []age.Recipient, outDir string) (splitDescription, []string, error) {
	id, err := tokenvault.LocalKeyID(key)
	if err != nil {
		return splitDescription{}, nil, err
	}
	d := splitDescription{KeyID: id, K: k, N: len(cs), Custodians: cs}
	shares, err := shamir.Split(key, len(cs), k)
	if err != nil {
		return d, nil, err
	}
	defer func() {
		for _, s := range shares {
			clear(s)
		}
	}()
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return d, nil, err
	}
	var files []string
	for i, c := range cs {
		var buf bytes.Buffer
		aw := armor.NewWriter(&buf)
		w, err := age.Encrypt(aw, rs[i])
		if err != nil {
			return d, files, err
		}
		text := shareText(d, shares[i])
		_, err = w.Write(text)
		clear(text)
		if err == nil {
			err = w.Close()
		}
		if err == nil {
			err = aw.Close()
		}
		if err != nil {
			return d, files, fmt.Errorf("encrypt the share of %s: %w", c.Name, err)
		}
		path := filepath.Join(outDir, shareFileName(c, id))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return d, files, fmt.Errorf("share file: %w", err)
		}
		_, err = f.Write(buf.Bytes())
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return d, files, err
		}
		files = append(files, path)
	}
	return d, files, syncDir(outDir)
}

// shareText is the plaintext of a share file.
func shareText(d splitDescription, s shamir.Share) []byte {
	return fmt.Appendf(nil, "%s key_id=%s k=%d n=%d x=%d\n%s\n", shareHeader, d.KeyID, d.K, d.N, s.X(), base64.StdEncoding.EncodeToString(s))
}

// errBadShare is a share that cannot be read; its message never quotes it.
var errBadShare = errors.New("not a share: give the decrypted text of a share file (its two lines, or the base64 line alone)")

// parseShare reads a share's plaintext; keyID is the id its header
// names ("" for a bare base64 line). It works on text's bytes, making no
// string of the share (strings cannot be cleared). Errors never quote the
// input.
func parseShare(text []byte) (s shamir.Share, keyID string, err error) {
	words := bytes.Fields(text)
	var b64 []byte
	switch {
	case len(words) == 1:
		b64 = words[0]
	case len(words) == 9 && string(bytes.Join(words[:4], []byte(" "))) == shareHeader && bytes.HasPrefix(words[4], []byte("key_id=")):
		keyID, b64 = string(words[4][len("key_id="):]), words[8]
		if !keyIDPattern.MatchString(keyID) {
			return nil, "", errBadShare
		}
	default:
		return nil, "", errBadShare
	}
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Decode(raw, b64)
	if err != nil || n != 1+rootKeySize || raw[0] == 0 {
		clear(raw)
		return nil, "", errBadShare
	}
	return shamir.Share(raw[:n]), keyID, nil
}

// decryptShareFile decrypts an age share file (armored or binary) with
// the identities of identityFile, in memory only.
func decryptShareFile(shareFile, identityFile string) ([]byte, error) {
	idf, err := os.Open(identityFile)
	if err != nil {
		return nil, err
	}
	ids, err := age.ParseIdentities(idf)
	idf.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: not an age identity file: %w", identityFile, err)
	}
	enc, err := os.ReadFile(shareFile)
	if err != nil {
		return nil, err
	}
	var r io.Reader = bytes.NewReader(enc)
	if bytes.HasPrefix(bytes.TrimSpace(enc), []byte(armor.Header)) {
		r = armor.NewReader(r)
	}
	dr, err := age.Decrypt(r, ids...)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot decrypt it with %s (is it the share of that custodian?): %w", shareFile, identityFile, err)
	}
	text, err := io.ReadAll(io.LimitReader(dr, 4096))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shareFile, err)
	}
	return text, nil
}

// combineShareFiles decrypts share files, each with its identity file,
// and combines them into the root key d describes. It fails, quoting no
// share, when there are fewer than d.K or they do not make that key.
func combineShareFiles(d splitDescription, shareFiles, identityFiles []string) ([]byte, error) {
	if len(shareFiles) != len(identityFiles) {
		return nil, fmt.Errorf("give one -split-identity for each -split-share (%d shares, %d identities)", len(shareFiles), len(identityFiles))
	}
	if len(shareFiles) < d.K {
		return nil, fmt.Errorf("the split root key needs %d shares (-split-share with -split-identity), not %d", d.K, len(shareFiles))
	}
	var shares []shamir.Share
	defer func() {
		for _, s := range shares {
			clear(s)
		}
	}()
	for i, f := range shareFiles {
		text, err := decryptShareFile(f, identityFiles[i])
		if err != nil {
			return nil, err
		}
		s, id, err := parseShare(text)
		clear(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if id != "" && id != d.KeyID {
			clear(s)
			return nil, fmt.Errorf("%s is a share of root key %s, not of this store's (%s)", f, id, d.KeyID)
		}
		shares = append(shares, s)
	}
	key, err := shamir.Combine(shares)
	if err != nil {
		return nil, err
	}
	if !d.checks(key) {
		clear(key)
		return nil, fmt.Errorf("the shares do not combine into root key %s: one of them is wrong", d.KeyID)
	}
	return key, nil
}

// splitDescriptionPath is where the split of dataDir is described.
func splitDescriptionPath(dataDir string) string { return filepath.Join(dataDir, splitFileName) }

// missingSplit says how to make a split when split.json is missing.
func missingSplit(dataDir string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("-seal split: %s has no %s: make the split first (tokenvault operator split-init -data %s -k K -recipients FILE -out DIR, or rotate-master-key -to split for a store under another root of trust)", dataDir, splitFileName, dataDir)
	}
	return fmt.Errorf("-seal split: %w", err)
}

// splitShareFlags defines -split-share and -split-identity, with which an
// offline command (rotate-master-key, restore) gathers the root key of
// -seal split: each custodian gives their share file and their age
// identity file, in the same order. Neither has an environment variable:
// they name files, and each run names its own.
func splitShareFlags(fs *FlagSet, c *config) {
	fs.Var(&c.splitShares, "split-share", "for -seal split: a custodian's share `file` (age-encrypted); give k of them, each with -split-identity")
	fs.Var(&c.splitIdentities, "split-identity", "for -seal split: the age identity `file` that decrypts the -split-share of the same rank")
}

// splitRootKey gathers the root key of the split of dataDir from share
// files and identities, and returns it with the split's description.
func splitRootKey(dataDir string, shareFiles, identityFiles []string) ([]byte, splitDescription, error) {
	d, err := readSplitDescription(splitDescriptionPath(dataDir))
	if err != nil {
		return nil, d, missingSplit(dataDir, err)
	}
	key, err := combineShareFiles(d, shareFiles, identityFiles)
	return key, d, err
}
