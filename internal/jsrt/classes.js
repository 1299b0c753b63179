// The service's error classes. Compiled once (classes.go) and run in a
// runtime only when the code first uses a class. mark (a Go function)
// records each instance with its class and the constructor's argument, so
// the host reads those rather than properties the code may have changed.
(function (mark) {
	'use strict';
	const defineProperty = Object.defineProperty;
	const classes = {};
	const errorClass = (name, status, title) => {
		const C = class extends Error {
			constructor(arg) {
				super(typeof arg === 'string' ? arg : title);
				mark(this, name, arg);
				this.status = status;
			}
		};
		defineProperty(C, 'name', { value: name, configurable: true });
		defineProperty(C.prototype, 'name', { value: name, writable: true, configurable: true });
		classes[name] = C;
	};
	errorClass('AuthenticationError', 401, 'Authentication failed');
	errorClass('AuthorizationError', 403, 'Authorization failed');
	errorClass('BadRequestError', 400, 'Bad request');
	errorClass('InvalidPaymentMethodError', 402, 'Invalid payment method');
	errorClass('RateLimitError', 429, 'Rate limit exceeded');
	errorClass('ReactorRuntimeError', 500, 'Reactor runtime error');
	errorClass('ServiceUnavailableError', 503, 'Service unavailable');

	class CustomHttpResponseError extends Error {
		constructor(response) {
			super('Custom HTTP response');
			const r = response !== null && typeof response === 'object' ? response : {};
			const arg = { status: r.status, headers: r.headers, body: r.body };
			mark(this, 'CustomHttpResponseError', arg);
			this.status = arg.status;
			this.headers = arg.headers;
			this.body = arg.body;
		}
	}
	defineProperty(CustomHttpResponseError.prototype, 'name', { value: 'CustomHttpResponseError', writable: true, configurable: true });
	classes.CustomHttpResponseError = CustomHttpResponseError;
	return Object.freeze(classes);
})
