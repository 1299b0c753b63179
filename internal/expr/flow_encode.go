package expr

// hmacFlow: a hex digest of fixed length, each character a function of
// the whole input. The key is written in the expression, so the digest
// shows the input (guesses can be tested against it).
func hmacFlow(t *aval, a []arg) *aval {
	c, o := t.gather()
	n := hmacs[a[0].s]().Size() * 2
	out := make([]achar, n)
	for i := range out {
		out[i] = achar{cls: clDigit | clLower, clear: c, exact: -1, opaque: o}
	}
	return str(out)
}

// asciiBytes returns s as one achar per byte, or false when a character
// may take more than one byte (then lengths are unknown).
func asciiBytes(s []achar) ([]achar, bool) {
	for _, c := range s {
		if c.konst && c.r >= utf8RuneSelf || !c.konst && c.cls&clOther != 0 {
			return nil, false
		}
	}
	return s, true
}

const utf8RuneSelf = 0x80

// base64Flow: each group of three bytes gives four characters that show
// those three; the padding depends on the length only.
func base64Flow(s []achar, _ []arg) *aval {
	b, ok := asciiBytes(s)
	if !ok {
		return blobOf(str(s), vStr)
	}
	var out []achar
	for g := 0; g < len(b); g += 3 {
		grp := b[g:min(g+3, len(b))]
		known := true
		var txt []byte
		d := achar{cls: clDigit | clUpper | clLower | clOther, exact: -1}
		for _, c := range grp {
			known = known && c.konst
			txt = append(txt, byte(c.r))
			d.clear, d.opaque = d.clear.Union(c.clear), d.opaque || c.opaque
		}
		enc, _ := toBase64(string(txt), nil)
		for i, r := range enc.(string) {
			switch {
			case known || r == '=' && i >= len(grp)+1:
				out = append(out, konstChar(r))
			default:
				out = append(out, d)
			}
		}
	}
	return str(out)
}

// base16Flow: each byte gives two hex characters that show it.
func base16Flow(s []achar, _ []arg) *aval {
	b, ok := asciiBytes(s)
	if !ok {
		return blobOf(str(s), vStr)
	}
	out := make([]achar, 0, 2*len(b))
	for _, c := range b {
		if c.konst {
			enc, _ := toBase16(string(c.r), nil)
			out = append(out, konstText(enc.(string)).s...)
			continue
		}
		h := c.derived(clDigit | clLower)
		out = append(out, h, h)
	}
	return str(out)
}
