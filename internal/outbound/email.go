package outbound

import (
	"slices"
	"strings"
	"unicode"
)

// A notification address (a webhook's notify_email) receives mail the
// Vault sends on the tenant's behalf, so its domain must be a public DNS
// name: not an address literal ("a@[127.0.0.1]"), not a dotless or
// numeric name ("a@localhost", "a@127.0.0.1"), not a special-use name
// (localhost, local, internal, invalid, test, example, onion: RFC 6761,
// 6762, 7686), and ASCII like a URL's host. Its local part is ASCII or
// letters of one script (a Japanese address may mix Han, Hiragana,
// Katakana and Latin): a mix such as a Cyrillic "а" among Latin letters
// ("pаypal@...") reads as another address, the confusable spelling
// phishing relies on.

// specialUseDomains are names (and the parents of names) that are not
// public DNS names.
var specialUseDomains = []string{"localhost", "local", "internal", "invalid", "test", "example", "onion", "home.arpa"}

// MailboxProblem says what is wrong with a notification address, or "":
// its domain must be a public DNS name and its local part not a mix of
// scripts. email must already be a bare address (one with an "@"), as
// the caller's own e-mail check makes sure.
func MailboxProblem(email string) string {
	at := strings.LastIndexByte(email, '@')
	local, domain := email[:at], strings.ToLower(strings.TrimSuffix(email[at+1:], "."))
	if problem := domainProblem(domain); problem != "" {
		return problem
	}
	if mixedScripts(local) {
		return "must not mix letters of several scripts before the @ (a look-alike of another address)"
	}
	return ""
}

// domainProblem says what is wrong with the domain of a notification
// address, lower case and without a trailing dot, or "".
func domainProblem(domain string) string {
	const public = "must be at a public domain name such as example.com: not an address, localhost or a special-use name"
	if strings.HasPrefix(domain, "[") {
		return public
	}
	if ASCIIHostProblem(domain) != "" {
		return "must name its domain in ASCII: write an international domain name in its xn-- form"
	}
	labels := strings.Split(domain, ".")
	last := labels[len(labels)-1]
	if len(labels) < 2 || last == "" || !strings.ContainsFunc(last, func(r rune) bool { return r < '0' || r > '9' }) || OddIPv4(domain) {
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
