package jsrt

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNodeModules: Buffer, URL, URLSearchParams and util come from
// goja_nodejs, as globals and through require, the same objects both ways.
func TestNodeModules(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name string
		expr string
		want any
	}{
		{"Buffer utf8 to base64", `Buffer.from('héllo').toString('base64')`, "aMOpbGxv"},
		{"Buffer hex", `Buffer.from('68656c6c6f', 'hex').toString()`, "hello"},
		{"Buffer from base64", `Buffer.from('aGk=', 'base64').toString('utf8')`, "hi"},
		{"Buffer.concat", `Buffer.concat([Buffer.from('a'), Buffer.from('bc')]).toString()`, "abc"},
		{"Buffer.alloc", `Buffer.alloc(3, 'x').toString()`, "xxx"},
		{"Buffer reads", `Buffer.from([1, 2, 3]).readUInt16BE(1)`, 515.0},
		{"Buffer is a Uint8Array", `Buffer.from('a') instanceof Uint8Array`, true},
		{"Buffer equals", `Buffer.from('a').equals(Buffer.from([97]))`, true},
		{"Buffer into crypto", `require('crypto').createHash('sha256').update(Buffer.from('abc')).digest('hex').slice(0, 8)`, "ba7816bf"},
		{"require('buffer')", `[require('buffer').Buffer === Buffer, require('node:buffer') === require('buffer')]`, []any{true, true}},
		{"URL normalizes", `new URL('HTTPS://Example.COM:443/a/../b?x=1#h').href`, "https://example.com/b?x=1#h"},
		{"URL parts", `(({protocol, hostname, port, pathname, search, hash}) => [protocol, hostname, port, pathname, search, hash])(new URL('http://a.example:8080/p/q?r=1#s'))`,
			[]any{"http:", "a.example", "8080", "/p/q", "?r=1", "#s"}},
		{"URL with a base", `String(new URL('/p?q=1', 'https://a.example/x/y'))`, "https://a.example/p?q=1"},
		{"URL searchParams", `new URL('https://a.example/?a=1&b=2').searchParams.get('b')`, "2"},
		{"URLSearchParams from an object", `new URLSearchParams({a: '1', b: 'x y&z'}).toString()`, "a=1&b=x+y%26z"},
		{"URLSearchParams getAll", `new URLSearchParams('a=1&a=2&b=3').getAll('a')`, []any{"1", "2"}},
		{"URLSearchParams iterates", `[...new URLSearchParams([['a', '1'], ['b', '2']])]`, []any{[]any{"a", "1"}, []any{"b", "2"}}},
		{"require('url')", `[require('url').URL === URL, require('node:url').URLSearchParams === URLSearchParams]`, []any{true, true}},
		{"util.format", `require('util').format('%s=%d %j %% %x', 'a', 42, {b: 1}, 'extra')`, `a=42 {"b":1} % %x extra`},
		{"require('node:util')", `require('node:util') === require('util')`, true},
		{"names are JavaScript's", `[Buffer.name, Buffer.from.name, Buffer.prototype.readUInt8.name, URL.name,
			Object.getOwnPropertyDescriptor(URL.prototype, 'href').get.name, URLSearchParams.prototype.get.name, require('util').format.name]`,
			[]any{"Buffer", "from", "readUInt8", "URL", "get href", "get", "format"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runOK(t, r, `module.exports = () => `+tc.expr, nil, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", tc.expr, diff)
			}
		})
	}

	// Host detail stays out of what the code can read.
	got := runOK(t, r, `module.exports = () => {
		const out = [String(Buffer), String(Buffer.from), String(URL), String(require('util').format)];
		try { new URL('not a url') } catch (e) { out.push(e.stack) }
		try { Buffer.from() } catch (e) { out.push(e.stack) }
		return out.join('\n') }`, nil, nil)
	checkSafe(t, got.(string))

	e := runErr(t, r, `module.exports = () => new URL('not a url')`, nil, nil)
	if e.Kind != Thrown || !strings.HasPrefix(e.Message, "TypeError: ") {
		t.Errorf("new URL('not a url') = %#v, want a TypeError", e)
	}
}

func TestTextEncoding(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name string
		expr string
		want any
	}{
		{"encode", `Array.from(new TextEncoder().encode('h€😀'))`, []any{104.0, 226.0, 130.0, 172.0, 240.0, 159.0, 152.0, 128.0}},
		{"encode nothing", `new TextEncoder().encode().length`, 0.0},
		{"encode a lone surrogate", `Array.from(new TextEncoder().encode('\ud800'))`, []any{239.0, 191.0, 189.0}},
		{"encode gives a Uint8Array", `new TextEncoder().encode('a') instanceof Uint8Array`, true},
		{"encoder encoding", `new TextEncoder().encoding`, "utf-8"},
		{"encodeInto whole characters only", `(() => { const b = new Uint8Array(5); const r = new TextEncoder().encodeInto('a€😀', b); return [r.read, r.written, Array.from(b)] })()`,
			[]any{2.0, 4.0, []any{97.0, 226.0, 130.0, 172.0, 0.0}}},
		{"encodeInto a surrogate pair", `new TextEncoder().encodeInto('😀', new Uint8Array(4)).read`, 2.0},
		{"decode", `new TextDecoder().decode(new Uint8Array([104, 226, 130, 172]))`, "h€"},
		{"decode an ArrayBuffer", `new TextDecoder().decode(new Uint8Array([104, 105]).buffer)`, "hi"},
		{"decode a DataView", `new TextDecoder().decode(new DataView(new Uint8Array([0, 104, 105]).buffer, 1))`, "hi"},
		{"decode a Buffer", `new TextDecoder().decode(Buffer.from('héllo'))`, "héllo"},
		{"decode a subarray", `new TextDecoder().decode(new Uint8Array([120, 104, 105, 120]).subarray(1, 3))`, "hi"},
		{"decode nothing", `new TextDecoder().decode()`, ""},
		{"truncated sequence is one U+FFFD", `new TextDecoder().decode(new Uint8Array([0xF0, 0x9F, 0x98, 0x41]))`, "\uFFFDA"},
		{"overlong", `new TextDecoder().decode(new Uint8Array([0xC0, 0x80]))`, "\uFFFD\uFFFD"},
		{"surrogate code point", `new TextDecoder().decode(new Uint8Array([0xED, 0xA0, 0x80]))`, "\uFFFD\uFFFD\uFFFD"},
		{"truncated at the end", `new TextDecoder().decode(new Uint8Array([0x61, 0xE2, 0x82]))`, "a\uFFFD"},
		{"BOM dropped", `new TextDecoder().decode(new Uint8Array([0xEF, 0xBB, 0xBF, 0x61]))`, "a"},
		{"BOM kept with ignoreBOM", `new TextDecoder('utf-8', {ignoreBOM: true}).decode(new Uint8Array([0xEF, 0xBB, 0xBF, 0x61]))`, "\uFEFFa"},
		{"stream", `(() => { const d = new TextDecoder(); return [d.decode(new Uint8Array([0xE2, 0x82]), {stream: true}), d.decode(new Uint8Array([0xAC]))] })()`, []any{"", "€"}},
		{"a new stream drops its BOM again", `(() => { const d = new TextDecoder(); const b = new Uint8Array([0xEF, 0xBB, 0xBF, 0x61]); return d.decode(b) + d.decode(b) })()`, "aa"},
		{"labels", `[new TextDecoder('UTF8 ').encoding, new TextDecoder('unicode-1-1-utf-8').encoding, new TextDecoder().fatal, new TextDecoder('utf-8', {fatal: true}).fatal]`,
			[]any{"utf-8", "utf-8", false, true}},
		{"toStringTag", `[Object.prototype.toString.call(new TextEncoder()), Object.prototype.toString.call(new TextDecoder())]`, []any{"[object TextEncoder]", "[object TextDecoder]"}},
		{"fatal throws", `(() => { try { new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0xFF])) } catch (e) { return e instanceof TypeError && e.message } })()`,
			"The encoded data was not valid for encoding utf-8"},
		{"fatal decoder recovers", `(() => { const d = new TextDecoder('utf-8', {fatal: true}); try { d.decode(new Uint8Array([0xE2]), {stream: true}); d.decode(new Uint8Array([0x41])) } catch (e) {} return d.decode(new Uint8Array([0x42])) })()`, "B"},
		{"other encodings refused", `(() => { try { new TextDecoder('latin1') } catch (e) { return e instanceof RangeError && e.message } })()`, `The "latin1" encoding is not supported`},
		{"decode refuses a string", `(() => { try { new TextDecoder().decode('abc') } catch (e) { return e instanceof TypeError } })()`, true},
		{"encodeInto refuses an Array", `(() => { try { new TextEncoder().encodeInto('a', []) } catch (e) { return e instanceof TypeError } })()`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runOK(t, r, `module.exports = () => `+tc.expr, nil, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
}

// TestConsoleFormat: a first argument that is a string is a util.format
// format when it has specifiers for the arguments; otherwise it is logged
// as it is, as today (goja_nodejs's util.format drops a trailing % and
// keeps %% once the arguments are used up; Node prints 100% and %).
func TestConsoleFormat(t *testing.T) {
	tests := []struct {
		code string
		want string
	}{
		{`console.log('%s is %d', 'x', 42, {a: 1})`, `x is 42 {"a":1}`},
		{`console.log('%j %s', {a: [1]}, 'b')`, `{"a":[1]} b`},
		{`console.log('%% of %d', 5)`, `% of 5`},
		{`console.log('100%')`, `100%`},
		{`console.log('100%', 5)`, `100% 5`},
		{`console.log('50%%')`, `50%%`},
		{`console.log('%s %s', 'only one')`, `only one %s`},
		{`console.log('', 'a')`, ` a`},
		{`console.log(1, '%s', 2)`, `1 %s 2`},
		{`console.log('%s', {toString() { throw new Error('no') }}, 'b')`, `%s [object Object] b`},
		{`console.info('%d items', '7')`, `7 items`},
	}
	for _, tc := range tests {
		h := &recorder{level: slog.LevelDebug}
		r := New(Options{Logger: slog.New(h)})
		runOK(t, r, `module.exports = () => { `+tc.code+` }`, nil, nil)
		if len(h.lines) != 1 {
			t.Errorf("%s logged %q, want one line", tc.code, h.lines)
			continue
		}
		_, msg, _ := strings.Cut(strings.SplitN(h.lines[0], " ", 2)[1], " ")
		if msg != tc.want {
			t.Errorf("%s logged %q, want %q", tc.code, msg, tc.want)
		}
	}
}

// TestRequireReadsNoFile: names that Node would resolve to files (a path,
// a relative name, a package in node_modules) are refused, files present
// or not.
func TestRequireReadsNoFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"x.js":                          "module.exports = 'read'",
		"node_modules/pkg/index.js":     "module.exports = 'read'",
		"node_modules/pkg/package.json": `{"main": "index.js"}`,
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	r := New(Options{})
	for _, name := range []string{filepath.Join(dir, "x.js"), "./x.js", "./x", "x.js", "pkg", "node:pkg", "./node_modules/pkg"} {
		// Not runErr: the message names the path the code gave, which
		// checkSafe would take for host detail.
		out, err := run(t, r, `module.exports = () => require(`+strconv.Quote(name)+`)`, nil, nil)
		e, ok := err.(*Error)
		if !ok || e.Kind != Thrown || e.Message != "module "+name+" is not available; allowed: @svc/errors, buffer, crypto, url, util" {
			t.Errorf("require(%q) = %v, %#v; want refused", name, out, err)
		}
	}
}
