// fetch and Headers, a subset of WHATWG Fetch. Compiled once (fetch.go)
// and run in a runtime when the code first uses either. The Go side
// (fetch.go) checks header names and values, and send calls the host's
// Fetcher synchronously.
//
//	headerName(name)            the name as a string, or a TypeError
//	headerValue(value)          the value trimmed, or a TypeError
//	searchParams()              URLSearchParams if the code has it, else undefined
//	isBytes(value)              whether value is an ArrayBuffer or a view of one
//	send(method, url, list, body)
//	                            [status, statusText, url, list, ArrayBuffer],
//	                            or a TypeError; body is undefined, a string
//	                            or bytes, list is [[name, value], ...]
//	decode(arrayBuffer)         the UTF-8 text, BOM dropped, U+FFFD for errors
//	hostError(e)                e, marked as the host's: its message is shown
//	                            (an engine error's is not; errors.go)
(function (headerName, headerValue, searchParams, isBytes, send, decode, hostError) {
	'use strict';
	const getPrototypeOf = Object.getPrototypeOf;
	const ObjectPrototype = Object.prototype;
	const stringify = JSON.stringify;
	const parse = JSON.parse;

	let listOf; // the list of a Headers: [[name as given, value], ...]
	let received; // an immutable Headers holding a response's list as it is

	class Headers {
		#list = [];
		#immutable = false;

		constructor(init = undefined) {
			if (init === undefined || init === null) {
				return;
			}
			if (typeof init !== 'object' && typeof init !== 'function') {
				throw hostError(new TypeError('Headers: init must be an object, an array of pairs or a Headers'));
			}
			if (#list in init) {
				for (const [name, value] of init.#list) {
					this.#list.push([name, value]);
				}
			} else if (typeof init[Symbol.iterator] === 'function') {
				for (const pair of init) {
					if (pair === null || (typeof pair !== 'object' && typeof pair !== 'function')) {
						throw hostError(new TypeError('Headers: each header must be a [name, value] pair'));
					}
					const items = [...pair];
					if (items.length !== 2) {
						throw hostError(new TypeError('Headers: each header must be a [name, value] pair'));
					}
					this.append(items[0], items[1]);
				}
			} else {
				for (const name of Object.keys(init)) {
					this.append(name, init[name]);
				}
			}
		}

		static {
			listOf = (h) => h.#list;
			received = (list) => {
				const h = new Headers();
				h.#list = list;
				h.#immutable = true;
				return h;
			};
		}

		#change() {
			if (this.#immutable) {
				throw hostError(new TypeError('Headers are immutable'));
			}
		}

		append(name, value) {
			const n = headerName(name);
			const v = headerValue(value);
			this.#change();
			this.#list.push([n, v]);
		}

		delete(name) {
			const key = headerName(name).toLowerCase();
			this.#change();
			this.#list = this.#list.filter(([n]) => n.toLowerCase() !== key);
		}

		get(name) {
			const key = headerName(name).toLowerCase();
			const values = this.#list.filter(([n]) => n.toLowerCase() === key).map(([, v]) => v);
			return values.length === 0 ? null : values.join(', ');
		}

		getSetCookie() {
			return this.#list.filter(([n]) => n.toLowerCase() === 'set-cookie').map(([, v]) => v);
		}

		has(name) {
			const key = headerName(name).toLowerCase();
			return this.#list.some(([n]) => n.toLowerCase() === key);
		}

		set(name, value) {
			const n = headerName(name);
			const v = headerValue(value);
			this.#change();
			const key = n.toLowerCase();
			const i = this.#list.findIndex(([m]) => m.toLowerCase() === key);
			if (i < 0) {
				this.#list.push([n, v]);
				return;
			}
			this.#list[i] = [this.#list[i][0], v];
			this.#list = this.#list.filter(([m], j) => j <= i || m.toLowerCase() !== key);
		}

		// The headers as iteration shows them: names lowercased, values of
		// the same name joined with ", " (each set-cookie apart), sorted
		// by name.
		#sorted() {
			const combined = new Map();
			const out = [];
			for (const [n, v] of this.#list) {
				const key = n.toLowerCase();
				const entry = combined.get(key);
				if (entry !== undefined && key !== 'set-cookie') {
					entry[1] += ', ' + v;
					continue;
				}
				const e = [key, v];
				combined.set(key, e);
				out.push(e);
			}
			return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
		}

		forEach(callback, thisArg = undefined) {
			if (typeof callback !== 'function') {
				throw hostError(new TypeError('Headers.forEach: the callback must be a function'));
			}
			for (const [n, v] of this.#sorted()) {
				callback.call(thisArg, v, n, this);
			}
		}

		*entries() {
			yield* this.#sorted();
		}

		*keys() {
			for (const [n] of this.#sorted()) {
				yield n;
			}
		}

		*values() {
			for (const [, v] of this.#sorted()) {
				yield v;
			}
		}

		[Symbol.iterator]() {
			return this.entries();
		}
	}
	Object.defineProperty(Headers.prototype, Symbol.toStringTag, { value: 'Headers', configurable: true });

	const secret = {};

	class Response {
		#status;
		#statusText;
		#url;
		#headers;
		#body;
		#used = false;

		constructor(token, status, statusText, url, list, body) {
			if (token !== secret) {
				throw hostError(new TypeError('Illegal constructor'));
			}
			this.#status = status;
			this.#statusText = statusText;
			this.#url = url;
			this.#headers = received(list);
			this.#body = body;
		}

		get status() {
			return this.#status;
		}
		get statusText() {
			return this.#statusText;
		}
		get ok() {
			return this.#status >= 200 && this.#status <= 299;
		}
		get url() {
			return this.#url;
		}
		get headers() {
			return this.#headers;
		}
		get bodyUsed() {
			return this.#used;
		}

		#consume() {
			if (this.#used) {
				throw hostError(new TypeError('Body has already been consumed'));
			}
			this.#used = true;
			const body = this.#body;
			this.#body = undefined;
			return body;
		}

		async text() {
			return decode(this.#consume());
		}
		async json() {
			return parse(decode(this.#consume()));
		}
		async arrayBuffer() {
			return this.#consume();
		}
	}
	Object.defineProperty(Response.prototype, Symbol.toStringTag, { value: 'Response', configurable: true });

	// body is what fetch sends for init.body, and its Content-Type unless
	// the code set one.
	const body = (b) => {
		if (typeof b === 'string') {
			return [b, 'text/plain;charset=UTF-8'];
		}
		const SearchParams = searchParams();
		if (SearchParams !== undefined && b instanceof SearchParams) {
			return [String(b), 'application/x-www-form-urlencoded;charset=UTF-8'];
		}
		if (isBytes(b)) {
			return [b, undefined];
		}
		if (typeof b === 'object' && (getPrototypeOf(b) === ObjectPrototype || getPrototypeOf(b) === null)) {
			// Our extension: a plain object is sent as JSON.
			return [stringify(b), 'application/json'];
		}
		return [String(b), 'text/plain;charset=UTF-8'];
	};

	// isRedirect reports whether status is a redirect status (WHATWG
	// Fetch): what redirect: "error" rejects on.
	const isRedirect = (status) => status === 301 || status === 302 || status === 303 || status === 307 || status === 308;

	async function fetch(input, init = undefined) {
		const o = init === undefined || init === null ? {} : init;
		const method = o.method === undefined ? 'GET' : String(o.method).toUpperCase();
		// Redirects are never followed, whatever the mode: "follow" and
		// "manual" resolve with the 3xx itself, "error" rejects on it.
		const redirect = o.redirect === undefined ? 'follow' : String(o.redirect);
		if (redirect !== 'follow' && redirect !== 'error' && redirect !== 'manual') {
			throw hostError(new TypeError('fetch: redirect must be "follow", "error" or "manual", not ' + stringify(redirect)));
		}
		const headers = new Headers(o.headers);
		let payload;
		if (o.body !== undefined && o.body !== null) {
			if (method === 'GET' || method === 'HEAD') {
				throw hostError(new TypeError('Request with GET/HEAD method cannot have body.'));
			}
			const [b, type] = body(o.body);
			payload = b;
			if (type !== undefined && !headers.has('content-type')) {
				headers.append('Content-Type', type);
			}
		}
		const [status, statusText, url, list, bytes] = send(method, String(input), listOf(headers), payload);
		if (redirect === 'error' && isRedirect(status)) {
			throw hostError(new TypeError('fetch failed: the destination answered a redirect (' + status + ') and redirect is "error"'));
		}
		return new Response(secret, status, statusText, url, list, bytes);
	}

	return { fetch, Headers };
})
