package unit

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Kind classifies an [Error]. The set is small and append-only; httpapi maps
// each kind to one HTTP status.
type Kind uint8

// The kinds of error a Vault method returns.
const (
	// Internal is a failure of the Vault or its store, not of the request.
	// Its message is generic; the cause is kept in Error.Err for the host's
	// logs and never shown to callers.
	Internal Kind = iota
	// Invalid: the request is malformed or fails validation. Fields names
	// the offending values.
	Invalid
	// Unauthenticated: the key is missing, unknown, expired or revoked.
	Unauthenticated
	// PermissionDenied: the key is valid but lacks the permission, or no
	// access rule matches.
	PermissionDenied
	// NotFound: the resource does not exist, or belongs to another tenant.
	NotFound
	// Conflict: the resource exists already, or its state forbids the change.
	Conflict
	// UnsupportedMediaType: the request body has a content type the
	// operation does not accept.
	UnsupportedMediaType
	// TooLarge: the request body or a value in it exceeds a limit.
	TooLarge
	// Unprocessable: the request is well formed but cannot be carried out,
	// for example code that does not export a function.
	Unprocessable
	// Unavailable: a service the operation depends on (the Mailer, a
	// destination) failed or is not configured; nothing was saved.
	Unavailable
	// CodeFailed: a tenant's reactor or transform code threw, or exceeded
	// a limit. Status is the HTTP status the code chose (its error class);
	// Headers and Body, when set, are a response the code built itself.
	CodeFailed
	// BadGateway: a proxy's destination could not be reached, timed out,
	// or answered more than the proxy accepts.
	BadGateway
	// RateLimited: the caller (its key, its tenant, its address after
	// failed authentications, which then refuses only further failures,
	// or its public application creating sessions from its address) is
	// over a rate limit. Error.RetryAfter says when to try again.
	// Nothing was done.
	RateLimited
	// StorageFull: the store refused a write because its storage is full
	// (no space left on the device or over quota; PostgreSQL's
	// disk_full). Nothing of the call was saved; it can succeed once space
	// is freed, without a restart: Error.RetryAfter suggests when to try
	// again. While writes fail so, [Vault.Ready] reports it too.
	StorageFull
	// Gone: the resource existed and was destroyed for good, so that it
	// can never be read again: a token of a data subject whose key an
	// erasure destroyed (docs/erasure.md).
	Gone
)

// CodeFailedProblemType is the problem type (RFC 9457) of an error tenant
// code raised with one of its error classes or by throwing, as httpapi
// answers it: a remote caller (package client) tells it by this from the
// vault's own error of the same status, and gets CodeFailed as in process.
// A tag URI: it names the type and is not meant to be fetched.
const CodeFailedProblemType = "tag:tokenvault,2026:code-failed"

var kindNames = [...]string{
	Internal:             "internal",
	Invalid:              "invalid",
	Unauthenticated:      "unauthenticated",
	PermissionDenied:     "permission denied",
	NotFound:             "not found",
	Conflict:             "conflict",
	UnsupportedMediaType: "unsupported media type",
	TooLarge:             "too large",
	Unprocessable:        "unprocessable",
	Unavailable:          "unavailable",
	CodeFailed:           "code failed",
	BadGateway:           "bad gateway",
	RateLimited:          "rate limited",
	StorageFull:          "storage full",
	Gone:                 "gone",
}

// Kinds lists every kind, so tables keyed by kind can be checked for
// completeness.
func Kinds() []Kind {
	ks := make([]Kind, len(kindNames))
	for i := range kindNames {
		ks[i] = Kind(i)
	}
	return ks
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Error is the one error type Vault methods return. Messages never contain
// secrets: no token data, no keys.
type Error struct {
	Kind    Kind
	Message string
	// Fields maps the path of an offending value (for example "name" or
	// "rules[1].container") to what is wrong with it.
	Fields map[string][]string
	// Err is the underlying cause of an Internal error, for the host's logs.
	Err error

	// Status, for CodeFailed, is the status the code's error class maps
	// to; Headers and Body, when Body is set, are to be sent verbatim
	// (CustomHttpResponseError).
	Status  int
	Headers map[string]string
	Body    any
	// Stop, for CodeFailed, says whether the Vault stopped the code (for
	// time, memory, or because its worker process crashed) rather than the
	// code failing by itself.
	Stop StopReason

	// RetryAfter, for RateLimited and StorageFull, is how long to wait
	// before the request can succeed (over HTTP the Retry-After header, in
	// whole seconds rounded up). For StorageFull it is a fixed guess (a
	// minute): the Vault cannot know when space will be freed.
	RetryAfter time.Duration
}

// Sentinel errors for errors.Is: errors.Is(err, ErrNotFound) reports whether
// err is an *Error of kind NotFound, whatever its message.
var (
	ErrInternal             = &Error{Kind: Internal}
	ErrInvalid              = &Error{Kind: Invalid}
	ErrUnauthenticated      = &Error{Kind: Unauthenticated}
	ErrPermissionDenied     = &Error{Kind: PermissionDenied}
	ErrNotFound             = &Error{Kind: NotFound}
	ErrConflict             = &Error{Kind: Conflict}
	ErrUnsupportedMediaType = &Error{Kind: UnsupportedMediaType}
	ErrTooLarge             = &Error{Kind: TooLarge}
	ErrUnprocessable        = &Error{Kind: Unprocessable}
	ErrUnavailable          = &Error{Kind: Unavailable}
	ErrCodeFailed           = &Error{Kind: CodeFailed}
	ErrBadGateway           = &Error{Kind: BadGateway}
	ErrRateLimited          = &Error{Kind: RateLimited}
	ErrStorageFull          = &Error{Kind: StorageFull}
	ErrGone                 = &Error{Kind: Gone}
)

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("tokenvault: ")
	if e.Message != "" {
		b.WriteString(e.Message)
	} else {
		b.WriteString(e.Kind.String())
	}
	if len(e.Fields) > 0 {
		paths := make([]string, 0, len(e.Fields))
		for p := range e.Fields {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			fmt.Fprintf(&b, "; %s: %s", p, strings.Join(e.Fields[p], ", "))
		}
	}
	return b.String()
}

// Unwrap returns the cause of an Internal error.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) and friends match by kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Fields == nil && t.Err == nil && t.Kind == e.Kind
}

// ErrorKind returns the kind of err: the kind of the *Error in its chain, or
// Internal for any other error.
func ErrorKind(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Errorf is an Error of kind k with a formatted message.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// AsInternal returns the *Error in err's chain, or an Internal error
// wrapping err whose message says nothing of the cause.
func AsInternal(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: Internal, Message: "internal error", Err: err}
}

// ErrUnauthenticatedKey is the error of a key that does not authenticate.
var ErrUnauthenticatedKey = &Error{Kind: Unauthenticated, Message: "missing, unknown or expired API key"}

// Forbidden is the error of a key that lacks permission perm.
func Forbidden(perm string) *Error {
	return Errorf(PermissionDenied, "the key lacks the permission %s", perm)
}

// NotFoundError is the error of a missing what ("token", "webhook").
func NotFoundError(what string) *Error {
	return Errorf(NotFound, "%s not found", what)
}

// FieldErrors collects validation failures and becomes one Invalid error.
type FieldErrors map[string][]string

// Add records what is wrong with the value at path.
func (f FieldErrors) Add(path, format string, args ...any) {
	f[path] = append(f[path], fmt.Sprintf(format, args...))
}

// Err is the Invalid error of what was added; nil when nothing was.
func (f FieldErrors) Err() error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Kind: Invalid, Message: "the request is invalid", Fields: f}
}

// InvalidField is a shorthand for a one-field validation error.
func InvalidField(path, format string, args ...any) *Error {
	f := FieldErrors{}
	f.Add(path, format, args...)
	return f.Err().(*Error)
}

// StopReason says why the Vault stopped tenant code, on an Error of kind
// CodeFailed. Zero when the code failed by itself (it threw).
type StopReason uint8

const (
	// CodeNotStopped: the code ran to its end (and threw, or returned
	// something unusable).
	CodeNotStopped StopReason = iota
	// CodeTimedOut: the code did not finish within its time (wall clock or
	// CPU), or the invocation was canceled.
	CodeTimedOut
	// CodeOutOfMemory: the code's worker process used all the memory it
	// may (Options.Code.MemoryBytes).
	CodeOutOfMemory
	// CodeCrashed: the code's worker process died otherwise, for example of
	// runaway native recursion.
	CodeCrashed
)

func (r StopReason) String() string {
	return [...]string{"not stopped", "timed out", "out of memory", "crashed"}[r]
}
