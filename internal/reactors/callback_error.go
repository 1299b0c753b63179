package reactors

import "github.com/tokenvault/tokenvault/internal/unit"

// CallbackError is the problem an asynchronous invocation ended with, in
// the shape of the HTTP error bodies (the root's WebhookError).
type CallbackError struct {
	Status int                 `json:"status"`
	Detail string              `json:"detail"`
	Errors map[string][]string `json:"errors,omitempty"`
}

// CallbackErrorOf is what a callback body (and the reactor.failed event)
// says of err: its status, message and fields, as an HTTP answer would;
// for an Internal error or one not of the vault, a generic 500.
func CallbackErrorOf(err error) *CallbackError {
	e, _ := err.(*unit.Error)
	if e == nil || e.Kind == unit.Internal {
		return &CallbackError{Status: 500, Detail: "internal error"}
	}
	status := e.Status
	if status == 0 {
		status = kindStatus[e.Kind]
	}
	return &CallbackError{Status: status, Detail: e.Message, Errors: e.Fields}
}

// kindStatus mirrors httpapi's table for callback bodies, which carry a
// status without going through HTTP. TestCallbackStatusOfEveryKind walks
// unit.Kinds(), so a kind added there cannot be missing here (a missing
// one was status 0).
var kindStatus = map[unit.Kind]int{
	unit.Internal: 500, unit.Invalid: 400, unit.Unauthenticated: 401, unit.PermissionDenied: 403, unit.NotFound: 404,
	unit.Conflict: 409, unit.UnsupportedMediaType: 415, unit.TooLarge: 413, unit.Unprocessable: 422, unit.Unavailable: 503,
	unit.CodeFailed: 500, unit.BadGateway: 502, unit.RateLimited: 429, unit.StorageFull: 507, unit.Gone: 410,
}
