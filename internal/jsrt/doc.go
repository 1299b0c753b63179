// Package jsrt runs tenant JavaScript, reactor code and proxy transforms,
// in a sandbox built on goja.
//
// Code is a Node-style (CommonJS) module whose module.exports is a
// function, usually async:
//
//	module.exports = async function (req) {
//		const { createHash } = require('crypto');
//		return { raw: { id: createHash('sha256').update(req.args.card).digest('hex') } };
//	};
//
// [Runtime.Compile] checks code once (size, syntax, and that running the
// module body exports a function) and caches the outcome by the SHA-256 of
// the code, in an LRU of 1024 entries. [Runtime.Run] runs the module body,
// calls the exported function with req, drives the event loop until the
// promise it returns settles, and exports the result as JSON-compatible Go
// values. A Runtime is safe for concurrent use.
//
// jsrt bounds the time code runs, not the memory or CPU it uses: run it
// only inside the sandbox worker process (internal/sandbox), whose
// operating-system limits bound those, or for code the host trusts. See
// "Limits".
//
// # Sandbox
//
// Every invocation gets a fresh goja runtime, used once and dropped: goja
// cannot reset a runtime, so reuse could leak state (a global, a patched
// built-in prototype, module-level variables) from one call or tenant to
// the next. goja.New is cheap because goja creates its built-ins lazily;
// what is shared is immutable (compiled programs and the preludes that
// define TextEncoder, TextDecoder, fetch, Headers and the error classes),
// and the sandbox's own globals are created on first use. The module body
// therefore runs on every invocation: module-level state does not persist
// between calls.
//
// Code sees the ECMAScript built-ins and:
//
//   - module, exports and require (parameters of the module function, as in
//     Node);
//   - console.log, info, warn, error, debug and trace, which write to
//     Options.Logger at slog.LevelDebug with the attribute
//     source="console.<method>" (at most 1000 lines of 8 KiB per
//     invocation), never to the caller. A first argument that is a string
//     with %s, %d or %j for the arguments after it is formatted by
//     util.format; other arguments are appended, strings as they are,
//     errors as "Name: message", other objects as JSON;
//   - setTimeout, setInterval, clearTimeout, clearInterval (delays of at
//     least 1ms, at most 1000 pending; callbacks run only before the
//     invocation's deadline) and queueMicrotask;
//   - atob and btoa;
//   - Buffer, URL and URLSearchParams, from goja_nodejs (the same objects
//     as require('buffer').Buffer and require('url').URL and
//     .URLSearchParams). goja_nodejs's Buffer knows the encodings utf8,
//     hex and base64 (not base64url or latin1);
//   - TextEncoder and TextDecoder (WHATWG Encoding), UTF-8 only:
//     encode, encodeInto, and decode with the fatal, ignoreBOM and stream
//     options; any other label is a RangeError;
//   - fetch and Headers (see "Fetch" below);
//   - the error classes below.
//
// These globals live on an object between the global object and
// Object.prototype, so they are created only when used. One goja quirk
// follows: in strict mode, assigning to one of them without declaring it
// (console = x) throws a ReferenceError; declare it or assign
// globalThis.console instead.
//
// There is no file system, process, socket or dynamic import. The only
// ways out are req.client (see [Client]) and fetch (see [Fetcher]), both
// carried out by the host, synchronously. Source maps are disabled, so a
// sourceMappingURL comment cannot make the parser read a file.
//
// require loads only allow-listed modules, once per invocation; a node:
// prefix is accepted (node:crypto is crypto):
//
//   - buffer, url and util: goja_nodejs's modules (Buffer; URL and
//     URLSearchParams; util.format with %s, %d, %j and %%). goja_nodejs's
//     require registry is not used, so nothing is ever loaded from a file;
//   - crypto: randomUUID(); createHash(alg) and createHmac(alg, key) for
//     md5, sha1, sha256, sha384 and sha512, with update(data[,
//     inputEncoding]) and digest('hex' | 'base64' | 'base64url' |
//     'latin1'), or digest() for a Uint8Array;
//   - @svc/errors: the error classes, the same objects as the globals.
//
// Anything else throws an Error: "module fs is not available; allowed:
// @svc/errors, buffer, crypto, url, util". goja names Go functions after
// themselves; the functions of goja_nodejs's modules are renamed after
// their properties, so that String(fn) and stack traces show no Go names.
//
// # Fetch
//
// fetch(input, init) is a subset of WHATWG Fetch, carried out by
// Host.Fetch. input is a string or a URL; it must be an absolute URL, and
// the host gets it as Go's net/url serializes it. init may give:
//
//   - method: upper-cased (all methods, not only the standard ones);
//     GET by default; CONNECT, TRACE and TRACK are refused;
//   - headers: a plain object, an array of [name, value] pairs, or a
//     Headers. The host gets them in the order given, names as given,
//     values trimmed; names must be HTTP tokens, values must not hold NUL,
//     CR or LF, and each character must be at most U+00FF (a byte);
//   - body, not allowed with GET or HEAD: a string (sent as UTF-8, with
//     Content-Type text/plain;charset=UTF-8 unless headers set one); a
//     URLSearchParams (form-urlencoded, Content-Type
//     application/x-www-form-urlencoded;charset=UTF-8 unless set); an
//     ArrayBuffer, a typed array (a Buffer too) or a DataView (its bytes,
//     no Content-Type); a plain object, whose prototype is Object.prototype
//     or null, as JSON.stringify gives it, with Content-Type
//     application/json unless set: that one is our extension, not
//     WHATWG's. Anything else is sent as String(body), as text.
//
// The host's Fetcher is called at once, on the invocation's goroutine,
// with the invocation's context (it ends at the deadline, and the Fetcher
// must honour it: the code cannot be interrupted while the call lasts,
// though Run still returns at the deadline), and fetch returns a promise
// already settled. It resolves with a response: status,
// statusText, ok (status 200 to 299), url (the final URL the host gives,
// else the request's), headers (an immutable Headers), bodyUsed, and
// text(), json() and arrayBuffer(), each a promise. The body can be read
// once; a second read rejects with TypeError("Body has already been
// consumed"). text() and json() decode UTF-8, dropping a byte order mark
// and replacing invalid bytes with U+FFFD; json() parses with JSON.parse
// and its depth bound. The promise rejects with a TypeError for an invalid
// request, with "fetch is not available" when Host.Fetch is nil, and with
// the message of the error Host.Fetch returned. fetch never throws.
// Redirects are never followed: the host answers the 3xx itself, and the
// redirect option decides what fetch does with it: "follow" (the default,
// named for WHATWG compatibility) and "manual" resolve with the 3xx
// response, "error" rejects with a TypeError on a redirect status (301,
// 302, 303, 307, 308); any other value rejects with a TypeError. There are
// no Request and Response classes, no streams, and no signal, cache or
// credentials options: the host decides all that. In
// Compile the module body runs with no Host, so a fetch there rejects.
//
// Headers is the WHATWG class: new Headers(init) from a plain object,
// pairs or another Headers; append, set, delete, get (case-insensitive;
// repeated names joined with ", "; null when absent), getSetCookie, has,
// forEach, entries, keys, values and iteration, which give names
// lowercased and sorted, values of one name joined (Set-Cookie apart).
//
// # Limits
//
// jsrt bounds time itself, by interrupting the goja runtime at the
// deadline. Memory and CPU are bounded by the operating system around the
// sandbox worker process that runs jsrt (internal/sandbox). jsrt has no
// memory bound of its own: code can allocate until the process dies, and a
// single built-in call ('x'.repeat(2 ** 29), a sort of a huge array) can
// take that memory, or a CPU, in one step nothing in the process can
// interrupt. jsrt must therefore run only inside that worker, or for code
// the host trusts.
//
// Each limit below ends the invocation with an [Error] of its Kind; the
// Runtime then carries on normally.
//
//   - Time (Timeout): the deadline is the earlier of ctx's and
//     Options.Timeout (default 10s). The goja runtime is interrupted at the
//     deadline or when ctx is canceled, even inside while (true) {} or a
//     promise callback. A single built-in call (a huge sort, a regular
//     expression that backtracks without end) cannot be interrupted; Run
//     then returns 25ms after the deadline anyway, and the abandoned
//     goroutine stops at its next instruction, if ever: the worker process
//     is what bounds it. A returned promise that is still pending when no
//     timer is left can never settle (nothing outside can resolve it), and
//     ends with Timeout at once rather than at the deadline.
//   - Recursion: the JavaScript call stack is limited to 3000 frames;
//     deeper recursion is a RuntimeFailure ("Maximum call stack size
//     exceeded"), not a crash. JSON.parse refuses nesting deeper than 512
//     levels with a SyntaxError, and eval and the Function constructors
//     throw a TypeError: goja's parsers recurse without a bound, and a
//     Go stack overflow would be a crash rather than an error.
//   - Code size: Compile refuses code over Options.MaxCodeBytes (default
//     256 KiB).
//   - Memory (MemoryLimit): never returned by jsrt itself. The sandbox
//     reports a worker killed for using too much memory with this kind.
//
// # Errors
//
// Failures of Run are *[Error]; failures of Compile are *[CompileError].
// Neither carries a Go stack trace or a host path: messages are the
// code's own or written here.
//
// Code may throw the error classes of the service (globals, and
// require('@svc/errors')), which extend Error:
//
//	AuthenticationError        401
//	AuthorizationError         403
//	BadRequestError            400
//	InvalidPaymentMethodError  402
//	RateLimitError             429
//	ReactorRuntimeError        500
//	ServiceUnavailableError    503
//	CustomHttpResponseError    {status, headers, body}, used verbatim
//
// The Error has Kind Thrown, Class the class name and Status its status.
// The constructor's argument becomes Errors: a string or an array gives
// {"error": [...]}, an object one array per property (non-string values as
// short JSON; at most 100 properties of 100 messages); a string argument is
// also the message, which is cut to 2 KiB like every message. For
// CustomHttpResponseError, Status is the status given (500 unless it is an
// integer from 100 to 599), Headers the headers (strings; arrays joined with
// ", ") and Body the body as JSON-compatible values.
//
// Anything else thrown, or a rejected promise, is Kind Thrown, Class
// "Error", Status 500. The message is an Error's message (prefixed with its
// name unless that is "Error", as in "TypeError: ..."), a thrown string
// itself, or a short rendering of any other value.
//
// The other kinds have Status 500 and no Class: Timeout, MemoryLimit (from
// the sandbox only), and RuntimeFailure for stack overflow, a result that
// is not JSON-compatible (a function, a symbol, a BigInt, a cycle, or a
// string or key with a lone UTF-16 surrogate, which goja would export as
// U+FFFD; named by its path such as "result.raw.callback") and failures of
// the host.
package jsrt
