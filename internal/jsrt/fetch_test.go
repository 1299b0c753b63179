package jsrt

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeFetcher records the requests it is given and answers each with resp
// (a 200 with no body when nil), or err.
type fakeFetcher struct {
	mu       sync.Mutex
	reqs     []*FetchRequest
	deadline bool // the last call's ctx had a deadline
	resp     *FetchResponse
	err      error
}

func (f *fakeFetcher) Fetch(ctx context.Context, req *FetchRequest) (*FetchResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	_, f.deadline = ctx.Deadline()
	if f.err != nil {
		return nil, f.err
	}
	if f.resp == nil {
		return &FetchResponse{Status: 200, StatusText: "OK"}, nil
	}
	return f.resp, nil
}

// runHost compiles and runs code with host.
func runHost(t *testing.T, r *Runtime, code string, host Host) (any, error) {
	t.Helper()
	return r.Run(t.Context(), mustCompile(t, r, code), nil, host)
}

func TestFetchRequest(t *testing.T) {
	r := New(Options{})
	const u = "https://api.example/v1/x"
	tests := []struct {
		name string
		call string
		want FetchRequest
	}{
		{"GET by default", `fetch('https://api.example/v1/x')`, FetchRequest{Method: "GET", URL: u}},
		{"a URL", `fetch(new URL('https://API.example/v1/../v1/x?q=1'))`, FetchRequest{Method: "GET", URL: "https://api.example/v1/x?q=1"}},
		{"method upper-cased", `fetch('` + u + `', {method: 'delete'})`, FetchRequest{Method: "DELETE", URL: u}},
		{"any method upper-cased", `fetch('` + u + `', {method: 'purge'})`, FetchRequest{Method: "PURGE", URL: u}},
		{"headers from an object, in order, trimmed", `fetch('` + u + `', {headers: {'X-B': '2', 'x-a': ' 1 ', 'Authorization': 'Bearer t'}})`,
			FetchRequest{Method: "GET", URL: u, Headers: [][2]string{{"X-B", "2"}, {"x-a", "1"}, {"Authorization", "Bearer t"}}}},
		{"headers from pairs, repeats kept", `fetch('` + u + `', {headers: [['X-A', '1'], ['x-a', '2'], ['Accept', 'text/plain']]})`,
			FetchRequest{Method: "GET", URL: u, Headers: [][2]string{{"X-A", "1"}, {"x-a", "2"}, {"Accept", "text/plain"}}}},
		{"headers from a Headers", `fetch('` + u + `', {headers: (() => { const h = new Headers({'X-A': '1'}); h.append('X-B', '2'); h.set('x-a', '3'); return h })()})`,
			FetchRequest{Method: "GET", URL: u, Headers: [][2]string{{"X-A", "3"}, {"X-B", "2"}}}},
		{"latin1 header value", `fetch('` + u + `', {headers: {'X-Name': 'José'}})`,
			FetchRequest{Method: "GET", URL: u, Headers: [][2]string{{"X-Name", "Jos\xe9"}}}},
		{"string body", `fetch('` + u + `', {method: 'POST', body: 'héllo'})`,
			FetchRequest{Method: "POST", URL: u, Headers: [][2]string{{"Content-Type", "text/plain;charset=UTF-8"}}, Body: []byte("héllo")}},
		{"string body, type given", `fetch('` + u + `', {method: 'POST', headers: {'content-type': 'text/csv'}, body: 'a,b'})`,
			FetchRequest{Method: "POST", URL: u, Headers: [][2]string{{"content-type", "text/csv"}}, Body: []byte("a,b")}},
		{"URLSearchParams body", `fetch('` + u + `', {method: 'POST', body: new URLSearchParams({a: '1', b: 'x y'})})`,
			FetchRequest{Method: "POST", URL: u, Headers: [][2]string{{"Content-Type", "application/x-www-form-urlencoded;charset=UTF-8"}}, Body: []byte("a=1&b=x+y")}},
		{"Uint8Array body", `fetch('` + u + `', {method: 'PUT', body: new Uint8Array([0, 1, 255])})`,
			FetchRequest{Method: "PUT", URL: u, Body: []byte{0, 1, 255}}},
		{"subarray body", `fetch('` + u + `', {method: 'PUT', body: new Uint8Array([9, 1, 2, 9]).subarray(1, 3)})`,
			FetchRequest{Method: "PUT", URL: u, Body: []byte{1, 2}}},
		{"ArrayBuffer body", `fetch('` + u + `', {method: 'PUT', body: new Uint8Array([7, 8]).buffer})`,
			FetchRequest{Method: "PUT", URL: u, Body: []byte{7, 8}}},
		{"Buffer body", `fetch('` + u + `', {method: 'PUT', body: Buffer.from('hi')})`,
			FetchRequest{Method: "PUT", URL: u, Body: []byte("hi")}},
		{"plain object body as JSON", `fetch('` + u + `', {method: 'POST', headers: [['X-A', '1']], body: {card: '4242', n: [1, 2]}})`,
			FetchRequest{Method: "POST", URL: u, Headers: [][2]string{{"X-A", "1"}, {"Content-Type", "application/json"}}, Body: []byte(`{"card":"4242","n":[1,2]}`)}},
		{"null-prototype object body as JSON", `fetch('` + u + `', {method: 'POST', body: Object.assign(Object.create(null), {a: 1})})`,
			FetchRequest{Method: "POST", URL: u, Headers: [][2]string{{"Content-Type", "application/json"}}, Body: []byte(`{"a":1}`)}},
		{"JSON body, type given", `fetch('` + u + `', {method: 'POST', headers: {'Content-Type': 'application/vnd.api+json'}, body: {a: 1}})`,
			FetchRequest{Method: "POST", URL: u, Headers: [][2]string{{"Content-Type", "application/vnd.api+json"}}, Body: []byte(`{"a":1}`)}},
		{"an array is not a plain object", `fetch('` + u + `', {method: 'POST', body: [1, 2]})`,
			FetchRequest{Method: "POST", URL: u, Headers: [][2]string{{"Content-Type", "text/plain;charset=UTF-8"}}, Body: []byte("1,2")}},
		{"null body", `fetch('` + u + `', {method: 'POST', body: null})`, FetchRequest{Method: "POST", URL: u}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeFetcher{}
			out, err := runHost(t, r, `module.exports = async () => { const res = await `+tc.call+`; return res.status }`, Host{Fetch: f})
			if err != nil || out != 200.0 {
				t.Fatalf("Run = %v, %v", out, err)
			}
			if len(f.reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(f.reqs))
			}
			if diff := cmp.Diff(&tc.want, f.reqs[0]); diff != "" {
				t.Errorf("%s: request mismatch (-want +got):\n%s", tc.call, diff)
			}
			if !f.deadline {
				t.Errorf("the Fetcher's ctx has no deadline")
			}
		})
	}
}

func TestFetchResponse(t *testing.T) {
	r := New(Options{})
	f := &fakeFetcher{resp: &FetchResponse{
		Status: 201, StatusText: "Created",
		Headers: [][2]string{{"Content-Type", "application/json"}, {"Set-Cookie", "a=1"}, {"X-Multi", "1"}, {"x-multi", "2"}, {"Set-Cookie", "b=2"}},
		Body:    []byte(`{"ok":true,"n":[1,2]}`),
	}}
	got, err := runHost(t, r, `module.exports = async () => {
		const r = await fetch('https://api.example/x');
		const h = r.headers;
		const each = [];
		h.forEach(function (v, k, o) { each.push(k + '=' + v + ':' + (o === h) + (this === each)) }, each);
		return {
			status: r.status, statusText: r.statusText, ok: r.ok, url: r.url, before: r.bodyUsed,
			contentType: h.get('CONTENT-TYPE'), multi: h.get('x-multi'), missing: h.get('nope'), has: [h.has('Set-Cookie'), h.has('nope')],
			cookies: h.getSetCookie(), entries: [...h], keys: [...h.keys()], values: [...h.values()], each,
			isHeaders: h instanceof Headers, tag: Object.prototype.toString.call(h),
			immutable: (() => { try { h.set('a', 'b') } catch (e) { return e instanceof TypeError && e.message } })(),
			json: await r.json(), after: r.bodyUsed,
		};
	}`, Host{Fetch: f})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"status": 201.0, "statusText": "Created", "ok": true, "url": "https://api.example/x", "before": false,
		"contentType": "application/json", "multi": "1, 2", "missing": nil, "has": []any{true, false},
		"cookies":   []any{"a=1", "b=2"},
		"entries":   []any{[]any{"content-type", "application/json"}, []any{"set-cookie", "a=1"}, []any{"set-cookie", "b=2"}, []any{"x-multi", "1, 2"}},
		"keys":      []any{"content-type", "set-cookie", "set-cookie", "x-multi"},
		"values":    []any{"application/json", "a=1", "b=2", "1, 2"},
		"each":      []any{"content-type=application/json:truetrue", "set-cookie=a=1:truetrue", "set-cookie=b=2:truetrue", "x-multi=1, 2:truetrue"},
		"isHeaders": true, "tag": "[object Headers]", "immutable": "Headers are immutable",
		"json": map[string]any{"ok": true, "n": []any{1.0, 2.0}}, "after": true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response mismatch (-want +got):\n%s", diff)
	}
}

func TestFetchBody(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name string
		body string
		code string // the function's body; res is the response
		want any
	}{
		{"text", "héllo", `return await res.text()`, "héllo"},
		{"text drops a BOM and replaces errors", "\xef\xbb\xbfa\xffb", `return await res.text()`, "a\uFFFDb"},
		{"json", `{"a":[1,"x",null]}`, `return await res.json()`, map[string]any{"a": []any{1.0, "x", nil}}},
		{"arrayBuffer", "\x00\x01\xff", `const b = await res.arrayBuffer(); return [b instanceof ArrayBuffer, Array.from(new Uint8Array(b))]`, []any{true, []any{0.0, 1.0, 255.0}}},
		{"empty body", "", `return [await res.text(), res.bodyUsed]`, []any{"", true}},
		{"text then json", "{}", `await res.text(); try { await res.json() } catch (e) { return [e instanceof TypeError, e.message] }`, []any{true, "Body has already been consumed"}},
		{"json then arrayBuffer", "{}", `await res.json(); try { await res.arrayBuffer() } catch (e) { return [e instanceof TypeError, e.message] }`, []any{true, "Body has already been consumed"}},
		{"text twice", "x", `await res.text(); try { await res.text() } catch (e) { return e.message }`, "Body has already been consumed"},
		{"bad JSON rejects", "{", `try { await res.json() } catch (e) { return [e instanceof SyntaxError, res.bodyUsed] }`, []any{true, true}},
		{"deep JSON is refused", strings.Repeat("[", 1000), `try { await res.json() } catch (e) { return e.message }`, "JSON nested more than 512 levels deep"},
		{"reads return promises", "x", `const p = res.text(); return [p instanceof Promise, await p]`, []any{true, "x"}},
		{"no public constructor", "", `try { new res.constructor() } catch (e) { return e.message }`, "Illegal constructor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeFetcher{resp: &FetchResponse{Status: 200, Body: []byte(tc.body)}}
			got, err := runHost(t, r, `module.exports = async () => { const res = await fetch('https://api.example/'); `+tc.code+` }`, Host{Fetch: f})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}

	// The code's copy of the body is its own.
	body := []byte("abc")
	f := &fakeFetcher{resp: &FetchResponse{Status: 200, Body: body}}
	if _, err := runHost(t, r, `module.exports = async () => { new Uint8Array(await (await fetch('https://api.example/')).arrayBuffer()).fill(0) }`, Host{Fetch: f}); err != nil {
		t.Fatal(err)
	}
	if string(body) != "abc" {
		t.Errorf("the code changed the host's body: %q", body)
	}
}

func TestFetchStatusAndURL(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		resp FetchResponse
		want []any // status, ok, statusText, url
	}{
		{FetchResponse{Status: 200}, []any{200.0, true, "", "https://api.example/a"}},
		{FetchResponse{Status: 299, StatusText: "Odd"}, []any{299.0, true, "Odd", "https://api.example/a"}},
		{FetchResponse{Status: 300}, []any{300.0, false, "", "https://api.example/a"}},
		{FetchResponse{Status: 404, StatusText: "Not Found"}, []any{404.0, false, "Not Found", "https://api.example/a"}},
		{FetchResponse{Status: 503}, []any{503.0, false, "", "https://api.example/a"}},
		{FetchResponse{Status: 200, URL: "https://api.example/b"}, []any{200.0, true, "", "https://api.example/b"}},
	}
	for _, tc := range tests {
		f := &fakeFetcher{resp: &tc.resp}
		got, err := runHost(t, r, `module.exports = async () => { const r = await fetch('https://api.example/a'); return [r.status, r.ok, r.statusText, r.url] }`, Host{Fetch: f})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v: mismatch (-want +got):\n%s", tc.resp, diff)
		}
	}
}

func TestFetchErrors(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name  string
		host  Host
		call  string
		want  string // the rejection's message, as the Error of Run gives it
		asked bool   // the request reached the Fetcher
	}{
		{"no Fetcher", Host{}, `fetch('https://api.example/')`, "TypeError: fetch is not available", false},
		{"the host refuses", Host{Fetch: &fakeFetcher{err: errors.New("destination api.example is not allowed")}}, `fetch('https://api.example/')`,
			"TypeError: destination api.example is not allowed", true},
		{"no response", Host{Fetch: nilFetcher{}}, `fetch('https://api.example/')`, "TypeError: fetch failed", false},
		{"GET with a body", Host{Fetch: &fakeFetcher{}}, `fetch('https://api.example/', {body: 'x'})`, "TypeError: Request with GET/HEAD method cannot have body.", false},
		{"HEAD with a body", Host{Fetch: &fakeFetcher{}}, `fetch('https://api.example/', {method: 'head', body: 'x'})`, "TypeError: Request with GET/HEAD method cannot have body.", false},
		{"relative URL", Host{Fetch: &fakeFetcher{}}, `fetch('/x')`, "TypeError: Failed to parse URL from /x", false},
		{"not a URL", Host{Fetch: &fakeFetcher{}}, `fetch('http://[::1')`, "TypeError: Failed to parse URL from http://[::1", false},
		{"bad header name", Host{Fetch: &fakeFetcher{}}, `fetch('https://api.example/', {headers: {'a b': '1'}})`, `TypeError: Invalid header name: "a b"`, false},
		{"bad header value", Host{Fetch: &fakeFetcher{}}, `fetch('https://api.example/', {headers: {'X-A': 'a\r\nX-B: b'}})`,
			"TypeError: Invalid header value: it must not contain NUL, CR, LF or characters above U+00FF", false},
		{"header value above U+00FF", Host{Fetch: &fakeFetcher{}}, `fetch('https://api.example/', {headers: {'X-A': '✓'}})`,
			"TypeError: Invalid header value: it must not contain NUL, CR, LF or characters above U+00FF", false},
		{"bad header pair", Host{Fetch: &fakeFetcher{}}, `fetch('https://api.example/', {headers: [['X-A']]})`, "TypeError: Headers: each header must be a [name, value] pair", false},
		{"bad headers", Host{Fetch: &fakeFetcher{}}, `fetch('https://api.example/', {headers: 'X-A: 1'})`, "TypeError: Headers: init must be an object, an array of pairs or a Headers", false},
		{"bad method", Host{Fetch: &fakeFetcher{}}, `fetch('https://api.example/', {method: 'GET /'})`, `TypeError: Invalid method: "GET /"`, false},
		{"CONNECT", Host{Fetch: &fakeFetcher{}}, `fetch('https://api.example/', {method: 'connect'})`, "TypeError: The method CONNECT is not allowed", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runHost(t, r, `module.exports = async () => { await `+tc.call+` }`, tc.host)
			e, ok := err.(*Error)
			if !ok || e.Kind != Thrown || e.Message != tc.want {
				t.Errorf("Run = %v, %#v; want the rejection %q", out, err, tc.want)
			}
			if f, ok := tc.host.Fetch.(*fakeFetcher); ok && (len(f.reqs) > 0) != tc.asked {
				t.Errorf("%d requests reached the Fetcher", len(f.reqs))
			}

			// fetch never throws: it returns a promise that rejects, and
			// the rejection is a TypeError the code can catch.
			got, err := runHost(t, r, `module.exports = async () => {
				let p;
				try { p = `+tc.call+` } catch (e) { return 'threw' }
				try { await p } catch (e) { return [p instanceof Promise, e instanceof TypeError] }
			}`, tc.host)
			if err != nil || !cmp.Equal(got, []any{true, true}) {
				t.Errorf("caught = %v, %v; want a rejected promise with a TypeError", got, err)
			}
		})
	}
}

// nilFetcher answers neither a response nor an error.
type nilFetcher struct{}

func (nilFetcher) Fetch(context.Context, *FetchRequest) (*FetchResponse, error) { return nil, nil }

func TestHeaders(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name string
		expr string
		want any
	}{
		{"get is case-insensitive", `new Headers({'Content-Type': 'text/plain'}).get('content-TYPE')`, "text/plain"},
		{"get joins repeats", `new Headers([['A', '1'], ['a', '2']]).get('A')`, "1, 2"},
		{"get of nothing", `new Headers().get('a')`, nil},
		{"append", `(() => { const h = new Headers(); h.append('A', '1'); h.append('a', '2'); return [...h] })()`, []any{[]any{"a", "1, 2"}}},
		{"set replaces every value", `(() => { const h = new Headers([['A', '1'], ['B', '2'], ['a', '3']]); h.set('a', 'x'); return [...h] })()`,
			[]any{[]any{"a", "x"}, []any{"b", "2"}}},
		{"set adds", `(() => { const h = new Headers(); h.set('A', '1'); return h.get('a') })()`, "1"},
		{"delete", `(() => { const h = new Headers([['A', '1'], ['B', '2'], ['a', '3']]); h.delete('a'); return [[...h], h.has('A')] })()`,
			[]any{[]any{[]any{"b", "2"}}, false}},
		{"has", `(() => { const h = new Headers({'X-A': ''}); return [h.has('x-a'), h.has('x-b'), h.get('x-a')] })()`, []any{true, false, ""}},
		{"values are trimmed", `new Headers({a: ' \t x y \n'}).get('a')`, "x y"},
		{"values become strings", `new Headers({a: 1, b: true}).get('a') + new Headers({b: true}).get('b')`, "1true"},
		{"iteration sorts and lowercases", `[...new Headers([['b', '1'], ['C', '3'], ['A', '2']]).entries()]`,
			[]any{[]any{"a", "2"}, []any{"b", "1"}, []any{"c", "3"}}},
		{"keys and values", `(() => { const h = new Headers({B: '2', a: '1'}); return [[...h.keys()], [...h.values()]] })()`,
			[]any{[]any{"a", "b"}, []any{"1", "2"}}},
		{"set-cookie apart", `[...new Headers([['Set-Cookie', 'a=1'], ['set-cookie', 'b=2']])]`, []any{[]any{"set-cookie", "a=1"}, []any{"set-cookie", "b=2"}}},
		{"copy of a Headers is independent", `(() => { const a = new Headers({x: '1'}); const b = new Headers(a); b.set('x', '2'); return [a.get('x'), b.get('x')] })()`,
			[]any{"1", "2"}},
		{"from a Map", `new Headers(new Map([['a', '1']])).get('a')`, "1"},
		{"toStringTag", `Object.prototype.toString.call(new Headers())`, "[object Headers]"},
		{"bad name", `(() => { try { new Headers().append('a:b', '1') } catch (e) { return [e instanceof TypeError, e.message] } })()`,
			[]any{true, `Invalid header name: "a:b"`}},
		{"bad name in get", `(() => { try { new Headers().get('') } catch (e) { return e instanceof TypeError } })()`, true},
		{"forEach needs a function", `(() => { try { new Headers().forEach(1) } catch (e) { return e instanceof TypeError } })()`, true},
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
