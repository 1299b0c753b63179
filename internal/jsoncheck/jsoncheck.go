// Package jsoncheck finds what encoding/json would decode from a JSON text
// with a loss: strings holding invalid UTF-8 or lone UTF-16 surrogate
// escapes ("\ud800" not followed by a low surrogate, or a lone "\udc00"),
// which it replaces with U+FFFD, and keys given twice in one object, of
// which it keeps the last value. Either way a value read back is not the
// value sent, without a word; [Check] walks the raw text once, before it is
// decoded, and names the first such string by its path.
//
// Check judges only strings. Text that is not JSON for another reason
// (a missing comma, a control character in a string, a bad \u escape) is
// left to the decoder, which reports it; the walk still ends.
package jsoncheck

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tokenvault/tokenvault/internal/jsondepth"
)

// Error locates a string that cannot be decoded without loss.
type Error struct {
	// Path is the JSON path of the offending value, in the form field
	// errors use: "data.name", "[2].data", "cards[0].number"; "" is the
	// whole document. For a duplicate key it is the path of the member
	// the key names.
	Path string
	// Key reports that the offending string is a key of the object at
	// Path, rather than the value at Path.
	Key bool
	// Offset is the byte offset of the offending byte or escape in the
	// text.
	Offset int
	// Reason says what is wrong, without quoting the text.
	Reason string
}

func (e *Error) Error() string {
	what := "the value"
	if e.Key {
		what = "a key"
	}
	at := e.Path
	if at == "" {
		at = "the document"
	}
	return "jsoncheck: " + what + " at " + at + " " + e.Reason + " (byte " + strconv.Itoa(e.Offset) + ")"
}

// Reasons an Error gives.
const (
	ReasonUTF8      = "is not valid UTF-8"
	ReasonSurrogate = "holds a lone UTF-16 surrogate escape"
	ReasonDuplicate = "is given more than once in its object"
	// ReasonFoldDuplicate: two keys of an object, spelt differently in
	// case, go into one struct field (Fold).
	ReasonFoldDuplicate = "is given more than once in its object, in keys that differ only in case"
)

// walks, when set, counts the texts check walks: see CountWalks.
var walks atomic.Pointer[atomic.Int64]

// CountWalks makes every later walk of a text (Check, Strings, Scan,
// ScanStrings) add one to n, until stop is called. It is for tests that
// hold a request to one walk of its body: with nothing counting, a walk
// costs one atomic load more.
func CountWalks(n *atomic.Int64) (stop func()) {
	walks.Store(n)
	return func() { walks.CompareAndSwap(n, nil) }
}

// frame is one open array or object.
type frame struct {
	object bool
	// index is the position in an array.
	index int
	// keyStart and keyEnd delimit the current key of an object, quotes
	// included; keyEnd is 0 while no key has been read.
	keyStart, keyEnd int
	// wantKey is set in an object where the next string is a key.
	wantKey bool
	// keys is where the object's keys begin in the walk's list of keys.
	keys int
	// set holds the object's keys once it has more than linearKeys.
	set *keySet
}

// key is a key read in an open object: text[start:end], quotes included.
type key struct {
	start, end int
	escaped    bool // it holds a backslash escape
}

// linearKeys is how many keys an object may have before duplicates are
// looked up in a map rather than by comparing with each one.
const linearKeys = 16

// Check returns the first string of text that is not valid UTF-8 or holds
// a lone surrogate escape, or the first key given twice in its object, or
// nil. It runs in time linear in len(text) (keys are looked up in a map
// past the first few of an object) and does not recurse.
func Check[T string | []byte](text T) *Error {
	_, _, e := check(text, true)
	return e
}

// Strings is Check without the duplicate keys: for a text whose
// duplicates are its sender's affair (a destination's answer, which a
// browser's JSON.parse would read keeping the last).
func Strings[T string | []byte](text T) *Error {
	_, _, e := check(text, false)
	return e
}

// Scan is Check that also measures, in the same pass, how deeply text
// nests (as jsondepth.Of does: the deepest nesting of arrays and objects,
// brackets inside strings skipped), so that a text is walked once before
// it is decoded. The depth is the whole text's, even when e is not nil.
func Scan[T string | []byte](text T) (depth int, e *Error) { return scan(text, true) }

// ScanStrings is Scan without the duplicate keys (see Strings).
func ScanStrings[T string | []byte](text T) (depth int, e *Error) { return scan(text, false) }

func scan[T string | []byte](text T, duplicates bool) (int, *Error) {
	depth, _, e := check(text, duplicates)
	if e != nil {
		// The walk stopped at e: the rest is measured without judging.
		depth = jsondepth.Of(text)
	}
	return depth, e
}

// check walks text once, returning the deepest nesting it met and the
// first string that cannot be decoded without loss. With duplicates, folds
// reports whether some object may hold two keys equal but for case (see
// ScanFolds): two such keys of an object of at most linearKeys keys, or
// any object of more.
func check[T string | []byte](text T, duplicates bool) (deepest int, folds bool, e *Error) {
	if n := walks.Load(); n != nil {
		n.Add(1)
	}
	// level counts as jsondepth.Of does, brackets that close nothing
	// included, so that both measure any text alike.
	level := 0
	var stackBuf [8]frame
	var keysBuf [32]key
	stack := stackBuf[:0]
	keys := keysBuf[:0] // the keys of every open object, in order
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '{':
			stack = append(stack, frame{object: true, wantKey: true, keys: len(keys)})
			level++
			deepest = max(deepest, level)
		case '[':
			stack = append(stack, frame{})
			level++
			deepest = max(deepest, level)
		case '}', ']':
			level--
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					keys = keys[:stack[n-1].keys]
					if set := stack[n-1].set; set != nil {
						set.release()
					}
				}
				stack = stack[:n-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					stack[n-1].wantKey = true
				} else {
					stack[n-1].index++
				}
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].wantKey = false
			}
		case '"':
			end, bad, reason := scanString(text, i)
			isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey
			if reason != "" {
				return deepest, folds, &Error{Path: path(text, stack, isKey), Key: isKey, Offset: bad, Reason: reason}
			}
			if isKey {
				f := &stack[len(stack)-1]
				f.keyStart, f.keyEnd = i, end+1
				if duplicates && end < len(text) { // a key cut short is the decoder's to report
					k := key{start: i, end: end + 1, escaped: hasEscape(text[i : end+1])}
					if seen(text, f, keys, k, &folds) {
						return deepest, folds, &Error{Path: path(text, stack, false), Offset: i, Reason: ReasonDuplicate}
					}
					if f.set == nil {
						keys = append(keys, k)
					}
				}
			}
			i = end
		}
	}
	return deepest, folds, nil
}

// seen reports whether the object f has a key equal to k once decoded.
// Up to linearKeys keys, which are keys[f.keys:], it compares k with each;
// beyond, it keeps them in a keySet instead, adding k when it is new.
// It sets *folds when k equals an earlier key but for case, or when the
// object has more than linearKeys keys (which are not compared so).
func seen[T string | []byte](text T, f *frame, keys []key, k key, folds *bool) bool {
	earlier := keys[f.keys:]
	if f.set == nil && len(earlier) < linearKeys {
		for _, e := range earlier {
			if sameKey(text, e, k) {
				return true
			}
			if !*folds && foldKey(text, e, k) {
				*folds = true
			}
		}
		return false
	}
	*folds = true
	if f.set == nil {
		f.set = keySets.Get().(*keySet)
		for _, e := range earlier {
			addKey(f.set, text, e) // unique: compared above
		}
	}
	return addKey(f.set, text, k)
}

// seed keys the hashes of keySet, so that no body can be made of keys
// whose hashes collide.
var seed = maphash.MakeSeed()

// keySet is a set of an object's keys by the seeded hash of each decoded
// key, open-addressed: for objects of many keys (a batch of 10,000
// values), with no allocation per key, and reused.
type keySet struct {
	hash  maphash.Hash
	slots []uint64 // hash | 1; 0 is an empty slot
	keys  []key    // the slot's key
	n     int
}

var keySets = sync.Pool{New: func() any {
	s := &keySet{}
	s.hash.SetSeed(seed)
	return s
}}

// release empties s and returns it to keySets.
func (s *keySet) release() {
	clear(s.slots)
	s.n = 0
	keySets.Put(s)
}

// addKey adds k to s and reports whether s held a key equal to it already
// (then k is not added).
func addKey[T string | []byte](s *keySet, text T, k key) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	h := keyHash(&s.hash, text, k) | 1
	mask := len(s.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i], s.keys[i] = h, k
			s.n++
			return false
		case h:
			if sameKey(text, s.keys[i], k) {
				return true
			}
		}
	}
}

// grow doubles s's table, placing each key again by its hash.
func (s *keySet) grow() {
	old, oldKeys := s.slots, s.keys
	size := max(4*linearKeys, 2*len(old))
	s.slots, s.keys = make([]uint64, size), make([]key, size)
	mask := size - 1
	for j, h := range old {
		if h == 0 {
			continue
		}
		i := int(h) & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i], s.keys[i] = h, oldKeys[j]
	}
}

// keyHash is the hash of k decoded.
func keyHash[T string | []byte](h *maphash.Hash, text T, k key) uint64 {
	h.Reset()
	if k.escaped {
		h.WriteString(keyName(text, k))
		return h.Sum64()
	}
	for i := k.start + 1; i < k.end-1; i++ {
		h.WriteByte(text[i])
	}
	return h.Sum64()
}

// sameKey reports whether the keys a and b are equal once decoded.
func sameKey[T string | []byte](text T, a, b key) bool {
	if sameText(text, a, b) {
		return true
	}
	if !a.escaped && !b.escaped {
		return false
	}
	return keyName(text, a) == keyName(text, b)
}

// foldKey reports whether the keys a and b are equal once decoded but
// for case, as encoding/json matches a key to a struct field
// (strings.EqualFold: simple Unicode case folding, "ſ" for "s", "K" for
// "k").
func foldKey[T string | []byte](text T, a, b key) bool {
	if a.escaped || b.escaped {
		return strings.EqualFold(keyName(text, a), keyName(text, b))
	}
	switch t := any(text).(type) {
	case string:
		return strings.EqualFold(t[a.start+1:a.end-1], t[b.start+1:b.end-1])
	case []byte:
		return bytes.EqualFold(t[a.start+1:a.end-1], t[b.start+1:b.end-1])
	}
	return false
}

// sameText reports whether a and b are the same text, escapes and all.
func sameText[T string | []byte](text T, a, b key) bool {
	if a.end-a.start != b.end-b.start {
		return false
	}
	for i := range a.end - a.start {
		if text[a.start+i] != text[b.start+i] {
			return false
		}
	}
	return true
}

// keyName is k decoded; a key that does not decode (a syntax error, the
// decoder's to report) is its raw text, which no decoded name equals.
func keyName[T string | []byte](text T, k key) string {
	raw := string(text[k.start:k.end])
	if !k.escaped {
		return raw[1 : len(raw)-1]
	}
	var name string
	if err := json.Unmarshal([]byte(raw), &name); err != nil {
		return "\x00raw:" + raw
	}
	return name
}

// hasEscape reports whether s holds a backslash.
func hasEscape[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			return true
		}
	}
	return false
}

// scanString reads the string whose opening quote is at text[start]. It
// returns the index of the closing quote (len(text) when there is none)
// and, for a string that would be decoded with a loss, the offset of the
// first offending byte and the reason.
func scanString[T string | []byte](text T, start int) (end, bad int, reason string) {
	for i := start + 1; i < len(text); {
		c := text[i]
		switch {
		case c == '"':
			return i, 0, ""
		case c == '\\':
			if i+1 < len(text) && text[i+1] == 'u' {
				r, ok := hex4(text, i+2)
				if !ok {
					i += 2 // a syntax error: the decoder's to report
					continue
				}
				switch {
				case r >= 0xD800 && r < 0xDC00:
					if i+7 < len(text) && text[i+6] == '\\' && text[i+7] == 'u' {
						if lo, ok := hex4(text, i+8); ok && lo >= 0xDC00 && lo < 0xE000 {
							i += 12
							continue
						}
					}
					return len(text), i, ReasonSurrogate
				case r >= 0xDC00 && r < 0xE000:
					return len(text), i, ReasonSurrogate
				}
				i += 6
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			var r rune
			var size int
			if s, ok := any(text).(string); ok {
				r, size = utf8.DecodeRuneInString(s[i:])
			} else {
				r, size = utf8.DecodeRune([]byte(text[i:min(i+utf8.UTFMax, len(text))]))
			}
			if r == utf8.RuneError && size == 1 {
				return len(text), i, ReasonUTF8
			}
			i += size
		}
	}
	return len(text), 0, ""
}

// hex4 decodes the four hex digits at text[i:i+4].
func hex4[T string | []byte](text T, i int) (rune, bool) {
	if i+4 > len(text) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(text[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// path renders the path of the value being read; for a key, the path of
// its object.
func path[T string | []byte](text T, stack []frame, key bool) string {
	if key {
		stack = stack[:len(stack)-1]
	}
	var b []byte
	for _, f := range stack {
		if !f.object {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
			continue
		}
		if f.keyEnd == 0 {
			continue
		}
		var name string
		if err := json.Unmarshal([]byte(text[f.keyStart:f.keyEnd]), &name); err != nil {
			name = "?"
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, name...)
	}
	return string(b)
}

// Message is what a field error says about e: what is wrong and what to
// send instead, without quoting the text.
func (e *Error) Message() string {
	subject := "is"
	if e.Key {
		subject = "has a key that is"
	}
	switch e.Reason {
	case ReasonDuplicate:
		return "is given more than once in its object; only one of its values would be kept"
	case ReasonFoldDuplicate:
		return "is given more than once in its object, in keys that differ only in case (field names match ignoring case); only one of its values would be kept"
	case ReasonSurrogate:
		if e.Key {
			subject = "has a key that"
		} else {
			subject = ""
		}
		return strings.TrimSpace(subject+" holds a lone UTF-16 surrogate escape (a \\ud800-\\udbff not followed by \\udc00-\\udfff, or a lone \\udc00-\\udfff)") +
			"; it would not be stored as sent"
	}
	return subject + " not valid UTF-8; it would not be stored as sent"
}

// Join prefixes path with the path of the value the text was found in:
// Join("args", "a.b") is "args.a.b", Join("args", "[0]") is "args[0]".
func Join(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	case path[0] == '[':
		return prefix + path
	}
	return prefix + "." + path
}
