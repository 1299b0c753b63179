// Package jsrt runs tenant JavaScript (reactor code and proxy transforms)
// in a sandbox built on goja.
//
// Code is a Node-style module whose module.exports is a function, usually
// async: module.exports = async function (req) { ... }. [Runtime.Compile]
// checks it once (syntax, size, and that it exports a function) and caches
// the compiled program by the SHA-256 of the code. [Runtime.Run] calls the
// function with req and waits for the promise it returns.
//
// # Sandbox
//
// Every run gets a fresh goja runtime: nothing a call leaves in the global
// scope or on a built-in prototype is visible to the next call or to another
// tenant. Code sees only the ECMAScript built-ins, console, the error
// classes below, module/exports, and require, which loads only the
// allow-listed modules:
//
//   - crypto: randomUUID(), createHash(alg) and createHmac(alg, key) for
//     sha256, sha1 and md5, with update(string) and digest('hex'|'base64').
//
// There is no file system, process, network or timer: the only way out is
// req.client, a view of the host's token operations. Because nothing can
// resolve a promise from outside, a promise still pending once the call and
// its microtasks have run can never settle; Run reports it as Timeout at
// once rather than waiting. console output goes to Options.Logger at debug
// level, never to the caller.
//
// # Limits
//
//   - Time: each run is interrupted at min(ctx deadline, Options.Timeout),
//     even inside while (true) {}.
//   - Memory: a watchdog samples the process heap every few milliseconds and
//     interrupts the run when it has grown by more than
//     Options.MaxMemoryBytes since the run began. The heap is shared, so the
//     measure is approximate under concurrency (a run may be charged for a
//     neighbour's growth); it exists to stop runaway code, not to account.
//     Recursion is bounded by a call stack of maxCallStack frames.
//   - Code size: Options.MaxCodeBytes.
//
// # Errors
//
// Code may throw the error classes of the service, available as globals:
// BadRequestError (400), AuthenticationError (401),
// InvalidPaymentMethodError (402), AuthorizationError (403), RateLimitError
// (429), ReactorRuntimeError (500), ServiceUnavailableError (503), and
// CustomHttpResponseError({status, headers, body}) whose response is used
// verbatim. A string or array argument becomes Errors {"error": [...]}; an
// object argument becomes one array per property. Anything else thrown is
// a 500 with its message. No error carries a Go stack or a host path.
package jsrt
