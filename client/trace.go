package client

import "context"

type requestIDCtx struct{}

// WithRequestID returns a context that makes the client send id as the
// X-Request-Id header of the requests it is used for: the server makes
// it the trace_id of the webhook events the request's changes emit (1 to
// 128 printable ASCII characters, no space; another value is ignored).
// A proxy call (InvokeProxy) sends the headers of its ProxyCall instead.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDCtx{}, id)
}

// requestID is the id WithRequestID put in ctx, or "".
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDCtx{}).(string)
	return id
}
