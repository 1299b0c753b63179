package transfer

import (
	"encoding/json"
	"strings"
	"unicode"
)

// The rule that keeps data out of imported ids. Ids are kept on import,
// and a past review found ids that carried card numbers; an id is shown
// in logs, URLs and every answer, so it must not carry what the token
// protects.
//
//   - A UUID (8-4-4-4-12 hexadecimal digits, any version) is accepted,
//     unless it holds a run of UUIDRun characters of the data (a random
//     UUID does so by chance about once in ten million imports of a card
//     number; a UUID made of the number's digits does always).
//   - Any other id is at most MaxIDLength characters of letters, digits
//     and - _ . : (no spaces, no other punctuation), and must hold no run
//     of IDRun characters of the data, with one exception: a card number's
//     BIN (its first 6 digits, 8 for 16 digits or more) and last four, the
//     part PCI DSS allows in clear, may appear (but no run of the number
//     longer than the two together).
//
// Runs are compared normalized: letters lowercased, everything but
// letters and digits removed from both sides, so "4242-4242" and
// "42424242" are the same run. The data is every string and number of
// the token's data, each on its own.
const (
	IDRun       = 5
	UUIDRun     = 8
	MaxIDLength = 128
)

// IDProblem says what is wrong with id as the kept id of a token of type
// typ holding data (plain JSON values), or "" if nothing is. Its reasons
// never quote the id or the data.
func IDProblem(id, typ string, data any) string {
	isUUID := IsUUID(id)
	if !isUUID {
		if len(id) > MaxIDLength {
			return "id: must be a UUID or at most 128 characters"
		}
		for _, r := range id {
			if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || strings.ContainsRune("-_.:", r)) {
				return "id: must be a UUID or letters, digits and - _ . : only"
			}
		}
	}
	nid := normalize(id)
	run := IDRun
	if isUUID {
		run = UUIDRun
	}
	if len(nid) < run {
		return ""
	}
	allowed := ""
	if typ == "card" {
		if m, ok := data.(map[string]any); ok {
			if n, ok := m["number"].(string); ok {
				allowed = cardShown(normalize(n))
			}
		}
	}
	carries := false
	leaves(data, func(s string) {
		if !carries && carriesRun(nid, normalize(s), run, allowed) {
			carries = true
		}
	})
	if carries {
		return "id: carries the data (see the import id rule)"
	}
	return ""
}

// cardShown is what of a card number may show in an id: its BIN and its
// last four, side by side (an id "tok_42424242_4242" shows no more).
func cardShown(n string) string {
	if len(n) < 12 {
		return ""
	}
	bin := 6
	if len(n) >= 16 {
		bin = 8
	}
	return n[:bin] + n[len(n)-4:]
}

// carriesRun reports whether id holds a run of run characters of value
// that is not within allowed, or (allowed being a card's BIN and last
// four) a run of value longer than allowed: a number whose middle repeats
// its ends must not pass whole.
func carriesRun(id, value string, run int, allowed string) bool {
	for i := 0; i+run <= len(value); i++ {
		w := value[i : i+run]
		if strings.Contains(id, w) && !strings.Contains(allowed, w) {
			return true
		}
	}
	if long := len(allowed) + 1; allowed != "" {
		for i := 0; i+long <= len(value); i++ {
			if strings.Contains(id, value[i:i+long]) {
				return true
			}
		}
	}
	return false
}

// leaves calls fn with every string and number of v.
func leaves(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case json.Number:
		fn(string(x))
	case map[string]any:
		for _, e := range x {
			leaves(e, fn)
		}
	case []any:
		for _, e := range x {
			leaves(e, fn)
		}
	}
}

// normalize keeps the letters (lowercased) and digits of s.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		case r > unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// IsUUID reports whether s is a UUID in its canonical text form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
