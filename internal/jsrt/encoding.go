package jsrt

import (
	_ "embed"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

//go:embed encoding.js
var encodingSource string

var encodingProgram = mustCompileJS("encoding.js", encodingSource)

// encoding builds TextEncoder and TextDecoder once per session.
func (s *session) encoding() *goja.Object {
	if s.textCodecs != nil {
		return s.textCodecs
	}
	fn, err := s.vm.RunProgram(encodingProgram)
	if err != nil {
		panic(err)
	}
	build, _ := goja.AssertFunction(fn)
	encode := s.fn("encode", 1, func(call goja.FunctionCall) goja.Value {
		// String() has replaced lone surrogates with U+FFFD, as
		// USVString conversion does.
		return s.uint8Array([]byte(call.Argument(0).String()))
	})
	encodeInto := s.fn("encodeInto", 2, func(call goja.FunctionCall) goja.Value {
		dst, ok := s.bufferBytes(call.Argument(1))
		if !ok {
			panic(s.hostTypeError("The \"destination\" argument must be a Uint8Array"))
		}
		read, written := encodeInto(call.Argument(0).String(), dst)
		return s.vm.NewArray(read, written)
	})
	newDecoder := s.fn("newDecoder", 2, func(call goja.FunctionCall) goja.Value {
		d := &utf8Decoder{fatal: call.Argument(0).ToBoolean(), ignoreBOM: call.Argument(1).ToBoolean()}
		return s.fn("decode", 2, func(call goja.FunctionCall) goja.Value {
			var in []byte
			if v := call.Argument(0); !goja.IsUndefined(v) {
				b, ok := s.bufferBytes(v)
				if !ok {
					panic(s.hostTypeError("The \"input\" argument must be an ArrayBuffer or an ArrayBufferView"))
				}
				in = b
			}
			out, ok := d.decode(in, call.Argument(1).ToBoolean())
			if !ok {
				panic(s.hostTypeError("The encoded data was not valid for encoding utf-8"))
			}
			return s.vm.ToValue(out)
		})
	})
	out, err := build(goja.Undefined(), encode, encodeInto, newDecoder, s.hostErrorFunc())
	if err != nil {
		panic(err)
	}
	s.textCodecs = out.ToObject(s.vm)
	return s.textCodecs
}

// encodeInto writes the UTF-8 of src into dst, whole characters only, and
// returns the UTF-16 code units read and the bytes written.
func encodeInto(src string, dst []byte) (read, written int) {
	for _, r := range src {
		n := utf8.RuneLen(r)
		if written+n > len(dst) {
			break
		}
		utf8.EncodeRune(dst[written:], r)
		written += n
		read++
		if r >= 0x10000 {
			read++ // a surrogate pair
		}
	}
	return read, written
}

// utf8Decoder is the UTF-8 decoder of the WHATWG Encoding standard: each
// maximal invalid subsequence becomes one U+FFFD (or fails, when fatal),
// and a leading byte order mark is dropped unless ignoreBOM is set.
type utf8Decoder struct {
	fatal, ignoreBOM bool

	cp           rune
	need, seen   int
	lower, upper byte
	started      bool // a code point was emitted in this stream
}

// decode decodes in, continuing the stream; stream false ends the stream
// after in. ok is false when fatal is set and in is not valid UTF-8; the
// decoder then starts a new stream.
func (d *utf8Decoder) decode(in []byte, stream bool) (out string, ok bool) {
	var b strings.Builder
	b.Grow(len(in))
	emit := func(r rune) {
		if !d.started {
			d.started = true
			if r == 0xFEFF && !d.ignoreBOM {
				return
			}
		}
		b.WriteRune(r)
	}
	fail := func() bool {
		d.cp, d.need, d.seen = 0, 0, 0
		if d.fatal {
			d.reset()
			return false
		}
		emit(utf8.RuneError)
		return true
	}
	for i := 0; i < len(in); i++ {
		c := in[i]
		if d.need == 0 {
			d.lower, d.upper = 0x80, 0xBF
			switch {
			case c <= 0x7F:
				emit(rune(c))
			case c >= 0xC2 && c <= 0xDF:
				d.need, d.cp = 1, rune(c&0x1F)
			case c >= 0xE0 && c <= 0xEF:
				if c == 0xE0 {
					d.lower = 0xA0
				} else if c == 0xED {
					d.upper = 0x9F
				}
				d.need, d.cp = 2, rune(c&0x0F)
			case c >= 0xF0 && c <= 0xF4:
				if c == 0xF0 {
					d.lower = 0x90
				} else if c == 0xF4 {
					d.upper = 0x8F
				}
				d.need, d.cp = 3, rune(c&0x07)
			default:
				if !fail() {
					return "", false
				}
			}
			continue
		}
		if c < d.lower || c > d.upper {
			if !fail() {
				return "", false
			}
			i-- // the byte starts something new
			continue
		}
		d.lower, d.upper = 0x80, 0xBF
		d.cp = d.cp<<6 | rune(c&0x3F)
		d.seen++
		if d.seen == d.need {
			r := d.cp
			d.cp, d.need, d.seen = 0, 0, 0
			emit(r)
		}
	}
	if !stream {
		if d.need != 0 && !fail() {
			return "", false
		}
		d.reset()
	}
	return b.String(), true
}

// reset starts a new stream.
func (d *utf8Decoder) reset() {
	d.cp, d.need, d.seen, d.started = 0, 0, 0, false
}
