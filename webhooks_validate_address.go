package tokenvault

import (
	"slices"
	"strings"
	"unicode"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// Spellings a webhook may not use in its URL's host or its notify_email.
//
// A host must be ASCII. The HTTP client maps a non-ASCII host through
// IDNA before it resolves it, and IDNA folds compatibility characters:
// "127.0.0.①", full-width "１２７.０.０.１", ideographic full stops and
// other Unicode digits become "127.0.0.1", so such a host would pass the
// address checks made on its spelling and be refused only at dial, or
// read as another name than the one shown. An international domain name
// is written in its ASCII form (xn--...), which is what IDNA would send
// anyway: any host whose IDNA form differs from its spelling (every
// non-ASCII host) is refused.
//
// A notify_email receives mail the Vault sends on the tenant's behalf,
// so its domain must be a public DNS name: not an address literal
// ("a@[127.0.0.1]"), not a dotless or numeric name ("a@localhost",
// "a@127.0.0.1"), not a special-use name (localhost, local, internal,
// invalid, test, example, onion: RFC 6761, 6762, 7686), and ASCII like
// a URL's host. Its local part is ASCII or letters of one script (a
// Japanese address may mix Han, Hiragana, Katakana and Latin): a mix
// such as a Cyrillic "а" among Latin letters ("pаypal@...") reads as
// another address, the confusable spelling phishing relies on.

// asciiHostProblem says what is wrong with a host that is not ASCII, or "".
func asciiHostProblem(host string) string {
	for _, r := range host {
		if r >= 0x80 {
			return "must name its host in ASCII: write an international domain name in its xn-- form; Unicode digits and dots are refused"
		}
	}
	return ""
}

// specialUseDomains are names (and the parents of names) that are not
// public DNS names.
var specialUseDomains = []string{"localhost", "local", "internal", "invalid", "test", "example", "onion", "home.arpa"}

// validateNotifyEmail checks a webhook's notify_email: a bare address
// (validateEmail) whose domain is a public DNS name and whose local part
// is not a mix of scripts.
func validateNotifyEmail(path, email string, fe unit.FieldErrors) {
	before := len(fe[path])
	validateEmail(path, email, fe)
	if len(fe[path]) > before {
		return
	}
	at := strings.LastIndexByte(email, '@')
	local, domain := email[:at], strings.ToLower(strings.TrimSuffix(email[at+1:], "."))
	if problem := notifyDomainProblem(domain); problem != "" {
		fe.Add(path, "%s", problem)
		return
	}
	if mixedScripts(local) {
		fe.Add(path, "must not mix letters of several scripts before the @ (a look-alike of another address)")
	}
}

// notifyDomainProblem says what is wrong with the domain of a
// notify_email, lower case and without a trailing dot, or "".
func notifyDomainProblem(domain string) string {
	const public = "must be at a public domain name such as example.com: not an address, localhost or a special-use name"
	if strings.HasPrefix(domain, "[") {
		return public
	}
	if asciiHostProblem(domain) != "" {
		return "must name its domain in ASCII: write an international domain name in its xn-- form"
	}
	labels := strings.Split(domain, ".")
	last := labels[len(labels)-1]
	if len(labels) < 2 || last == "" || !strings.ContainsFunc(last, func(r rune) bool { return r < '0' || r > '9' }) || oddIPv4(domain) {
		return public
	}
	for _, s := range specialUseDomains {
		if domain == s || strings.HasSuffix(domain, "."+s) {
			return public
		}
	}
	return ""
}

// scriptTables are the scripts mixedScripts tells apart; a letter of
// none of them counts as a script of its own.
var scriptTables = []*unicode.RangeTable{unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Armenian,
	unicode.Hebrew, unicode.Arabic, unicode.Devanagari, unicode.Bengali, unicode.Tamil, unicode.Thai,
	unicode.Georgian, unicode.Hangul, unicode.Hiragana, unicode.Katakana, unicode.Han, unicode.Bopomofo}

// cjkMixes are the sets of scripts one language writes together (UTS 39,
// "highly restrictive"), besides Latin alone: Japanese, Korean, Chinese.
var cjkMixes = [][]*unicode.RangeTable{
	{unicode.Latin, unicode.Han, unicode.Hiragana, unicode.Katakana},
	{unicode.Latin, unicode.Han, unicode.Hangul},
	{unicode.Latin, unicode.Han, unicode.Bopomofo},
}

// mixedScripts reports whether s holds letters of more than one script
// (but for the CJK mixes), or a character past ASCII that is not a
// letter or a combining mark (a digit, a symbol, a space or a format
// character of another script).
func mixedScripts(s string) bool {
	seen := map[*unicode.RangeTable]bool{}
	for _, r := range s {
		if r < 0x80 {
			if unicode.IsLetter(r) {
				seen[unicode.Latin] = true
			}
			continue
		}
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) {
			continue
		}
		if !unicode.IsLetter(r) {
			return true
		}
		found := false
		for _, tab := range scriptTables {
			if unicode.Is(tab, r) {
				seen[tab], found = true, true
				break
			}
		}
		if !found {
			return true
		}
	}
	if len(seen) <= 1 {
		return false
	}
	for _, mix := range cjkMixes {
		within := true
		for tab := range seen {
			within = within && slices.Contains(mix, tab)
		}
		if within {
			return false
		}
	}
	return true
}
