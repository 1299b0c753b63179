package jsrt

import (
	"bytes"
	_ "embed"
	"net/url"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

//go:embed fetch.js
var fetchSource string

var fetchProgram = mustCompileJS("fetch.js", fetchSource)

// web builds fetch and Headers once per session.
func (s *session) web() *goja.Object {
	if s.fetchAPI != nil {
		return s.fetchAPI
	}
	fn, err := s.vm.RunProgram(fetchProgram)
	if err != nil {
		panic(err)
	}
	build, _ := goja.AssertFunction(fn)
	headerName := s.fn("headerName", 1, func(call goja.FunctionCall) goja.Value {
		name, ok := checkHeaderName(call.Argument(0).String())
		if !ok {
			panic(s.hostTypeError("Invalid header name: " + strconv.Quote(clipTo(call.Argument(0).String(), 100))))
		}
		return s.vm.ToValue(name)
	})
	headerValue := s.fn("headerValue", 1, func(call goja.FunctionCall) goja.Value {
		v, ok := checkHeaderValue(call.Argument(0).String())
		if !ok {
			panic(s.hostTypeError("Invalid header value: it must not contain NUL, CR, LF or characters above U+00FF"))
		}
		return s.vm.ToValue(v)
	})
	searchParams := s.fn("searchParams", 0, func(goja.FunctionCall) goja.Value {
		if _, ok := s.modules["url"]; !ok {
			return goja.Undefined() // the code has none
		}
		return s.moduleExport("url", "URLSearchParams")
	})
	isBytes := s.fn("isBytes", 1, func(call goja.FunctionCall) goja.Value {
		_, ok := s.bufferBytes(call.Argument(0))
		return s.vm.ToValue(ok)
	})
	send := s.fn("send", 4, func(call goja.FunctionCall) goja.Value {
		return s.send(call.Argument(0).String(), call.Argument(1).String(), call.Argument(2), call.Argument(3))
	})
	decode := s.fn("decode", 1, func(call goja.FunctionCall) goja.Value {
		b, _ := s.bufferBytes(call.Argument(0))
		out, _ := (&utf8Decoder{}).decode(b, false)
		return s.vm.ToValue(out)
	})
	out, err := build(goja.Undefined(), headerName, headerValue, searchParams, isBytes, send, decode, s.hostErrorFunc())
	if err != nil {
		panic(err)
	}
	s.fetchAPI = out.ToObject(s.vm)
	return s.fetchAPI
}

// send carries out one fetch through the host's Fetcher and returns
// [status, statusText, url, [[name, value], ...], ArrayBuffer], or throws
// a TypeError. It checks again what fetch.js checked: the list it reads
// is the code's to tamper with, through the built-ins.
func (s *session) send(method, rawURL string, list, body goja.Value) goja.Value {
	if s.host.Fetch == nil {
		panic(s.hostTypeError("fetch is not available"))
	}
	req := &FetchRequest{Method: method}
	if _, ok := checkHeaderName(method); !ok {
		panic(s.hostTypeError("Invalid method: " + strconv.Quote(clipTo(method, 100))))
	}
	switch method {
	case "CONNECT", "TRACE", "TRACK":
		panic(s.hostTypeError("The method " + method + " is not allowed"))
	}
	u, err := url.Parse(rawURL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		panic(s.hostTypeError("Failed to parse URL from " + clipTo(rawURL, 200)))
	}
	req.URL = u.String()

	pairs := list.ToObject(s.vm)
	for i := range pairs.Get("length").ToInteger() {
		pair := pairs.Get(strconv.FormatInt(i, 10)).ToObject(s.vm)
		name, okName := checkHeaderName(pair.Get("0").String())
		value, okValue := checkHeaderValue(pair.Get("1").String())
		if !okName || !okValue {
			panic(s.hostTypeError("Invalid header " + strconv.Quote(clipTo(name, 100))))
		}
		b, _ := fromLatin1(value)
		req.Headers = append(req.Headers, [2]string{name, string(b)})
	}

	switch {
	case goja.IsUndefined(body):
	case goja.IsString(body):
		req.Body = []byte(body.String())
	default:
		b, ok := s.bufferBytes(body)
		if !ok {
			panic(s.hostTypeError("Invalid body"))
		}
		req.Body = bytes.Clone(b)
	}

	resp, err := s.host.Fetch.Fetch(s.ctx, req)
	if err != nil {
		panic(s.hostTypeError(err.Error()))
	}
	if resp == nil {
		panic(s.hostTypeError("fetch failed"))
	}
	finalURL := resp.URL
	if finalURL == "" {
		finalURL = req.URL
	}
	headers := make([]any, len(resp.Headers))
	for i, h := range resp.Headers {
		headers[i] = s.vm.NewArray(latin1([]byte(h[0])), latin1([]byte(h[1])))
	}
	// A copy: the code owns what it reads, and the host keeps its own.
	ab := s.vm.NewArrayBuffer(bytes.Clone(resp.Body))
	return s.vm.NewArray(resp.Status, resp.StatusText, finalURL, s.vm.NewArray(headers...), ab)
}

// checkHeaderName reports whether name is an HTTP token (RFC 9110), as
// header names and methods must be.
func checkHeaderName(name string) (string, bool) {
	if name == "" {
		return name, false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 0x80 || !isTokenChar[c] {
			return name, false
		}
	}
	return name, true
}

var isTokenChar = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// checkHeaderValue trims HTTP whitespace from both ends of value and
// reports whether what remains may be a header value: no NUL, CR or LF,
// and characters up to U+00FF only (a byte string).
func checkHeaderValue(value string) (string, bool) {
	value = strings.Trim(value, "\t\n\r ")
	for _, r := range value {
		if r == 0 || r == '\r' || r == '\n' || r > 0xFF {
			return value, false
		}
	}
	return value, true
}
