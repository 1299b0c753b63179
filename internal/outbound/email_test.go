package outbound

import "testing"

// TestMailboxProblem: a notification address is at a public DNS name,
// not a literal, a numeric, dotless or special-use name, and its local
// part does not mix scripts, but for the mixes one language writes.
func TestMailboxProblem(t *testing.T) {
	const (
		public = "must be at a public domain name such as example.com: not an address, localhost or a special-use name"
		ascii  = "must name its domain in ASCII: write an international domain name in its xn-- form"
		mixed  = "must not mix letters of several scripts before the @ (a look-alike of another address)"
	)
	for email, want := range map[string]string{
		"ops@example.com":                                "",
		"ops+hooks@mail.example.co.uk":                   "",
		"ops@Example.COM.":                               "",
		"j\u00f6rg@example.de":                           "",
		"\u3084\u307e\u3060\u592a\u90ce@example.jp":      "", // Hiragana and Han
		"\u0438\u0432\u0430\u043d@xn--e1afmkfd.xn--p1ai": "",
		"a@[127.0.0.1]":                                  public,
		"a@localhost":                                    public,
		"a@localhost.":                                   public,
		"a@127.0.0.1":                                    public,
		"a@mail.0x7f":                                    public,
		"a@mail.localhost":                               public,
		"a@hooks.internal":                               public,
		"a@printer.local":                                public,
		"a@router.home.arpa":                             public,
		"ops@\u0435xample.com":                           ascii,
		"p\u0430ypal@example.com":                        mixed, // a Cyrillic a among Latin letters
		"ops\u0661@example.com":                          mixed, // an Arabic-Indic digit
		"ops\u200b@example.com":                          mixed, // a zero-width space
		"\u0440\u0430\u0443pal@test.com":                 mixed,
	} {
		if got := MailboxProblem(email); got != want {
			t.Errorf("MailboxProblem(%q) = %q, want %q", email, got, want)
		}
	}
}
