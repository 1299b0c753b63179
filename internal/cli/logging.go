package cli

import (
	"context"
	"log/slog"

	"github.com/tokenvault/tokenvault/httpapi"
)

// logRequest returns an httpapi Observe hook that logs each API request at
// Info, one line after it is answered:
//
//	level=INFO msg=request method=GET route=/tokens/{id} status=200 duration=1.2ms tenant=0190…
//
// It logs the route pattern, never the path: paths hold ids, and operators
// aggregate on routes. An Observation holds nothing the caller sent (no
// body, header, query string or key), so neither keys nor token data can
// reach the log through it. tenant is the tenant whose key was accepted,
// and is left out when none was.
func logRequest(log *slog.Logger) func(context.Context, httpapi.Observation) {
	return func(ctx context.Context, o httpapi.Observation) {
		attrs := []slog.Attr{
			slog.String("method", methodName(o.Method)),
			slog.String("route", routeName(o.Route)),
			slog.Int("status", o.Status),
			slog.Duration("duration", o.Duration),
		}
		if o.TenantID != "" {
			attrs = append(attrs, slog.String("tenant", o.TenantID))
		}
		log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
	}
}
