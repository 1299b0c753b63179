// TextEncoder and TextDecoder (WHATWG Encoding), UTF-8 only. Compiled once
// (encoding.go) and run in a runtime when the code first uses either. The
// byte work is Go's: encode(string) returns a Uint8Array of its UTF-8,
// encodeInto(string, bytes) fills bytes and returns [read, written], and
// newDecoder(fatal, ignoreBOM) returns decode(input, stream), which keeps
// an incomplete sequence from one call to the next while stream is true;
// hostError(e) marks e as the host's, so that its message is shown.
(function (encode, encodeInto, newDecoder, hostError) {
	'use strict';
	const labels = ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf-8', 'utf8', 'x-unicode20utf8'];
	const defineProperty = Object.defineProperty;
	const U8 = Uint8Array;

	class TextEncoder {
		get encoding() {
			return 'utf-8';
		}
		encode(input = '') {
			return encode(String(input));
		}
		encodeInto(source, destination) {
			if (!(destination instanceof U8)) {
				throw hostError(new TypeError('The "destination" argument must be a Uint8Array'));
			}
			const [read, written] = encodeInto(String(source), destination);
			return { read, written };
		}
	}

	class TextDecoder {
		#fatal;
		#ignoreBOM;
		#decode;
		constructor(label = 'utf-8', options = undefined) {
			const name = String(label).trim().toLowerCase();
			if (!labels.includes(name)) {
				throw hostError(new RangeError('The "' + name + '" encoding is not supported'));
			}
			const o = options === undefined || options === null ? {} : options;
			this.#fatal = Boolean(o.fatal);
			this.#ignoreBOM = Boolean(o.ignoreBOM);
			this.#decode = newDecoder(this.#fatal, this.#ignoreBOM);
		}
		get encoding() {
			return 'utf-8';
		}
		get fatal() {
			return this.#fatal;
		}
		get ignoreBOM() {
			return this.#ignoreBOM;
		}
		decode(input = undefined, options = undefined) {
			const stream = options !== undefined && options !== null && Boolean(options.stream);
			return this.#decode(input, stream);
		}
	}

	for (const C of [TextEncoder, TextDecoder]) {
		defineProperty(C.prototype, Symbol.toStringTag, { value: C.name, configurable: true });
	}
	return { TextEncoder, TextDecoder };
})
