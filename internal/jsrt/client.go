package jsrt

import (
	"context"
	"errors"

	"github.com/dop251/goja"
)

// Host is what tenant code can reach outside the sandbox. Both fields may
// be nil.
type Host struct {
	// Client is req.client; nil makes req.client null.
	Client Client
	// Fetch carries out the global fetch; nil makes every fetch reject
	// with a TypeError saying fetch is not available.
	Fetch Fetcher
}

// Fetcher carries out a fetch for the code. The host applies its own
// policy (destinations, number and size of requests); an error rejects the
// code's promise with a TypeError whose message is err.Error(), which the
// host makes safe to show.
type Fetcher interface {
	Fetch(ctx context.Context, req *FetchRequest) (*FetchResponse, error)
}

// FetchRequest is one fetch as the code asked for it.
type FetchRequest struct {
	Method  string      `json:"method"`
	URL     string      `json:"url"`
	Headers [][2]string `json:"headers,omitempty"` // in the order given, names as given
	Body    []byte      `json:"body,omitempty"`
}

// FetchResponse is what the destination answered.
type FetchResponse struct {
	Status     int         `json:"status"`
	StatusText string      `json:"status_text,omitempty"`
	URL        string      `json:"url,omitempty"`
	Headers    [][2]string `json:"headers,omitempty"`
	Body       []byte      `json:"body,omitempty"`
}

// Client is the host's view given to code as req.client (JS:
// req.client.tokenize(body), .getToken(id), .deleteToken(id),
// .detokenize(body), .getTokenIntent(id), .deleteTokenIntent(id)). Methods are called synchronously from JS, with the
// invocation's context (it ends at the deadline); the JS side gets the
// value, converted to plain JavaScript values (code may await it: awaiting
// a plain value works). An error returned by a method is thrown into JS as
// an Error whose message is err.Error(): the host makes those messages
// safe.
type Client interface {
	Tokenize(ctx context.Context, body any) (any, error)
	GetToken(ctx context.Context, id string) (any, error)
	DeleteToken(ctx context.Context, id string) error
	Detokenize(ctx context.Context, body any) (any, error)
	// GetTokenIntent and DeleteTokenIntent read (never the data) and
	// delete a token intent; code converts one with tokenize and a token
	// request carrying token_intent_id.
	GetTokenIntent(ctx context.Context, id string) (any, error)
	DeleteTokenIntent(ctx context.Context, id string) error
}

// clientObject is the JS view of c.
func (s *session) clientObject(c Client) *goja.Object {
	o := s.vm.NewObject()
	o.Set("tokenize", s.fn("tokenize", 1, func(call goja.FunctionCall) goja.Value {
		return s.hostResult(c.Tokenize(s.ctx, s.hostArg(call.Argument(0), "tokenize: body")))
	}))
	o.Set("detokenize", s.fn("detokenize", 1, func(call goja.FunctionCall) goja.Value {
		return s.hostResult(c.Detokenize(s.ctx, s.hostArg(call.Argument(0), "detokenize: body")))
	}))
	o.Set("getToken", s.fn("getToken", 1, func(call goja.FunctionCall) goja.Value {
		return s.hostResult(c.GetToken(s.ctx, s.tokenID(call.Argument(0), "getToken")))
	}))
	o.Set("deleteToken", s.fn("deleteToken", 1, func(call goja.FunctionCall) goja.Value {
		if err := c.DeleteToken(s.ctx, s.tokenID(call.Argument(0), "deleteToken")); err != nil {
			panic(s.newError(err.Error()))
		}
		return goja.Undefined()
	}))
	o.Set("getTokenIntent", s.fn("getTokenIntent", 1, func(call goja.FunctionCall) goja.Value {
		return s.hostResult(c.GetTokenIntent(s.ctx, s.idArg(call.Argument(0), "getTokenIntent", "token intent")))
	}))
	o.Set("deleteTokenIntent", s.fn("deleteTokenIntent", 1, func(call goja.FunctionCall) goja.Value {
		if err := c.DeleteTokenIntent(s.ctx, s.idArg(call.Argument(0), "deleteTokenIntent", "token intent")); err != nil {
			panic(s.newError(err.Error()))
		}
		return goja.Undefined()
	}))
	return o
}

// hostArg exports an argument for the host, throwing a TypeError into the
// code when it is not JSON-compatible.
func (s *session) hostArg(v goja.Value, what string) any {
	out, err := s.export(v, what)
	var ex *goja.Exception
	switch {
	case err == nil:
		return out
	case errors.As(err, &ex):
		panic(ex) // rethrow what the code's getter or toJSON threw
	case errors.As(err, new(*Error)):
		// A limit: the runtime stays interrupted, so the code cannot go on.
		panic(s.hostTypeError(what + ": " + err.(*Error).Message))
	}
	panic(s.hostTypeError(err.Error()))
}

func (s *session) tokenID(v goja.Value, method string) string { return s.idArg(v, method, "token") }

// idArg is the id of a what (a token, a token intent) the code passed to
// method, throwing a TypeError when it is not a string.
func (s *session) idArg(v goja.Value, method, what string) string {
	if !goja.IsString(v) {
		panic(s.hostTypeError(method + ": the " + what + " id must be a string"))
	}
	return v.String()
}

// hostResult gives the code what the host returned, or throws its error.
func (s *session) hostResult(v any, err error) goja.Value {
	if err != nil {
		panic(s.newError(err.Error()))
	}
	out, err := s.toJS(v)
	if err != nil {
		panic(s.newError("the host returned a value the code cannot use"))
	}
	return out
}
