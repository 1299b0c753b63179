package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The error model is defined in internal/unit, below every feature, so
// that each returns the same Error; these are its public names.

// Kind classifies an [Error]. The set is small and append-only; httpapi maps
// each kind to one HTTP status.
type Kind = unit.Kind

// The kinds of error a Vault method returns.
const (
	// Internal is a failure of the Vault or its store, not of the request.
	// Its message is generic; the cause is kept in Error.Err for the host's
	// logs and never shown to callers.
	Internal = unit.Internal
	// Invalid: the request is malformed or fails validation. Fields names
	// the offending values.
	Invalid = unit.Invalid
	// Unauthenticated: the key is missing, unknown, expired or revoked.
	Unauthenticated = unit.Unauthenticated
	// PermissionDenied: the key is valid but lacks the permission, or no
	// access rule matches.
	PermissionDenied = unit.PermissionDenied
	// NotFound: the resource does not exist, or belongs to another tenant.
	NotFound = unit.NotFound
	// Conflict: the resource exists already, or its state forbids the change.
	Conflict = unit.Conflict
	// UnsupportedMediaType: the request body has a content type the
	// operation does not accept.
	UnsupportedMediaType = unit.UnsupportedMediaType
	// TooLarge: the request body or a value in it exceeds a limit.
	TooLarge = unit.TooLarge
	// Unprocessable: the request is well formed but cannot be carried out,
	// for example code that does not export a function.
	Unprocessable = unit.Unprocessable
	// Unavailable: a service the operation depends on (the Mailer, a
	// destination) failed or is not configured; nothing was saved.
	Unavailable = unit.Unavailable
	// CodeFailed: a tenant's reactor or transform code threw, or exceeded
	// a limit. Status is the HTTP status the code chose (its error class);
	// Headers and Body, when set, are a response the code built itself.
	CodeFailed = unit.CodeFailed
	// BadGateway: a proxy's destination could not be reached, timed out,
	// or answered more than the proxy accepts.
	BadGateway = unit.BadGateway
	// RateLimited: the caller is over a rate limit. Error.RetryAfter says
	// when to try again. Nothing was done.
	RateLimited = unit.RateLimited
	// StorageFull: the store refused a write because its storage is full.
	// Nothing of the call was saved; Error.RetryAfter suggests when to try
	// again. While writes fail so, [Vault.Ready] reports it too.
	StorageFull = unit.StorageFull
	// Gone: the resource was destroyed for good: a token of a data
	// subject whose key an erasure destroyed (EraseSubject), read from a
	// copy of the store taken before the erasure.
	Gone = unit.Gone
)

// CodeFailedProblemType is the problem type (RFC 9457) of an error tenant
// code raised: see [unit.CodeFailedProblemType].
const CodeFailedProblemType = unit.CodeFailedProblemType

// Kinds lists every kind, so tables keyed by kind can be checked for
// completeness.
func Kinds() []Kind { return unit.Kinds() }

// Error is the one error type Vault methods return. Messages never contain
// secrets: no token data, no keys.
type Error = unit.Error

// StopReason says why the Vault stopped tenant code, on an Error of kind
// CodeFailed. Zero when the code failed by itself (it threw).
type StopReason = unit.StopReason

// The reasons tenant code was stopped.
const (
	CodeNotStopped  = unit.CodeNotStopped
	CodeTimedOut    = unit.CodeTimedOut
	CodeOutOfMemory = unit.CodeOutOfMemory
	CodeCrashed     = unit.CodeCrashed
)

// Sentinel errors for errors.Is: errors.Is(err, ErrNotFound) reports whether
// err is an *Error of kind NotFound, whatever its message.
var (
	ErrInternal             = unit.ErrInternal
	ErrInvalid              = unit.ErrInvalid
	ErrUnauthenticated      = unit.ErrUnauthenticated
	ErrPermissionDenied     = unit.ErrPermissionDenied
	ErrNotFound             = unit.ErrNotFound
	ErrConflict             = unit.ErrConflict
	ErrUnsupportedMediaType = unit.ErrUnsupportedMediaType
	ErrTooLarge             = unit.ErrTooLarge
	ErrUnprocessable        = unit.ErrUnprocessable
	ErrUnavailable          = unit.ErrUnavailable
	ErrCodeFailed           = unit.ErrCodeFailed
	ErrBadGateway           = unit.ErrBadGateway
	ErrRateLimited          = unit.ErrRateLimited
	ErrStorageFull          = unit.ErrStorageFull
	ErrGone                 = unit.ErrGone
)

// ErrorKind returns the kind of err: the kind of the *Error in its chain, or
// Internal for any other error.
func ErrorKind(err error) Kind { return unit.ErrorKind(err) }
