package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault"
)

// Options configure the handler. Zero values mean the defaults.
type Options struct {
	// MaxBodyBytes bounds request bodies. Zero: 1 MiB.
	MaxBodyBytes int64
	// Logger receives internal errors (never secrets). Nil: slog.Default().
	Logger *slog.Logger
	// Observe, if set, is called once for every request after it is
	// answered: the hook for access logs and metrics. It runs on the
	// request's goroutine, so it should be quick.
	Observe func(context.Context, Observation)
	// TrustForwardedFor takes the client address (which the Vault uses to
	// throttle failed authentications and to budget sessions per address)
	// from the last address in the X-Forwarded-For header, as set by a
	// reverse proxy in front of this handler. Only for a handler that is
	// reachable solely through such a proxy: otherwise any client could
	// name any address. A last entry that is not an IP address is not
	// taken: the connection's address is used. False: the host of the
	// connection's remote address.
	TrustForwardedFor bool
	// OperatorKey, when set, opens the operator API under /operator/
	// (creating, listing and deleting tenants; backups) to callers that
	// send it in the SVC-API-KEY header. It is no tenant key: every other
	// route refuses it (401), and /operator/ refuses every tenant key.
	// Only its SHA-256 is kept, and it is compared in constant time; it
	// is never logged. At least MinOperatorKeyLength characters (New
	// panics on a shorter one); a random 256-bit key is best. Empty: the
	// operator routes answer 404, as unknown routes do.
	OperatorKey string
	// ConsolePath, when set, is the path of a web console served beside
	// this handler (such as /console/): GET / names it, so that a person
	// who opens the base URL finds it. Empty: GET / names none.
	ConsolePath string
}

// APIKeyHeader carries the caller's application or session key.
const APIKeyHeader = "SVC-API-KEY"

type api struct {
	v       *tokenvault.Vault
	maxBody int64
	logger  *slog.Logger
	observe func(context.Context, Observation)
	// trustXFF: see Options.TrustForwardedFor.
	trustXFF bool
	// console: see Options.ConsolePath.
	console string
	mux     *http.ServeMux
	// patterns lists every route served, in registration order, so a
	// test can hold the OpenAPI document to it.
	patterns []string
	// query holds the query parameters each pattern accepts.
	query map[string][]string
	// operatorHash is the SHA-256 of Options.OperatorKey; nil: none.
	operatorHash *[sha256.Size]byte
}

// New returns a handler serving the REST interface of v. Mount it under a
// prefix with http.StripPrefix.
func New(v *tokenvault.Vault, opts Options) http.Handler {
	a := &api{v: v, maxBody: opts.MaxBodyBytes, logger: opts.Logger, observe: opts.Observe, trustXFF: opts.TrustForwardedFor, console: opts.ConsolePath,
		mux: http.NewServeMux(), query: map[string][]string{}}
	if a.maxBody <= 0 {
		a.maxBody = 1 << 20
	}
	if a.logger == nil {
		a.logger = slog.Default()
	}
	a.setOperatorKey(opts.OperatorKey)
	a.routes()
	return a
}

// handle registers one route, with the query parameters it accepts: any
// other is refused with a 400 naming it, before the handler runs, so a
// misspelt filter is never silently ignored. A name ending in ".*"
// accepts every parameter with that prefix (metadata.<key>); anyQuery
// accepts any query (proxy invocation, whose query is the destination's).
func (a *api) handle(pattern string, h http.HandlerFunc, query ...string) {
	if idempotentRoutes[pattern] {
		h = a.idempotent(h)
	}
	a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := checkQuery(query, r.URL.RawQuery); err != nil {
			a.writeError(w, r, err)
			return
		}
		h(w, r)
	})
	a.patterns = append(a.patterns, pattern)
	a.query[pattern] = query
}

// anyQuery, as the query of a route, accepts any query parameter.
const anyQuery = "*"

// list is the query of a list route: page, size and the cursor start,
// then the route's filters.
func list(filters ...string) []string {
	return append([]string{"page", "size", "start"}, filters...)
}

// checkQuery refuses the parameters of rawQuery that allowed does not name.
//
// A query that does not parse (a bad percent-escape, a ';') is refused
// whole: url.Values drops such a pair without a word, and with it the
// filter the caller meant (type=card%zz listed every token).
func checkQuery(allowed []string, rawQuery string) error {
	if slices.Contains(allowed, anyQuery) {
		return nil
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the query string is malformed: every name=value pair must be percent-encoded, and pairs separated by &"}
	}
	fields := map[string][]string{}
	for name, values := range q {
		switch {
		case !queryAllowed(allowed, name):
			takes := "none"
			if len(allowed) > 0 {
				takes = strings.ReplaceAll(strings.Join(allowed, ", "), ".*", ".<key>")
			}
			fields[name] = []string{"unknown query parameter; this route takes " + takes}
		case len(values) > 1 && !listQuery[name]:
			// Only the first would be read: size=5&size=6 is a
			// mistake, not a choice between the two.
			fields[name] = []string{"given more than once; this parameter takes one value"}
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return &tokenvault.Error{Kind: tokenvault.Invalid, Message: "the query has parameters this route does not take as given", Fields: fields}
}

// listQuery names the query parameters that may be repeated, each value
// one more item of a list (id=a&id=b); every other takes one value.
var listQuery = map[string]bool{"id": true, "user_id": true}

func queryAllowed(allowed []string, name string) bool {
	for _, p := range allowed {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) && len(name) > len(prefix) || p == name {
			return true
		}
	}
	return false
}

func (a *api) routes() {
	a.handle("GET /{$}", a.root)

	a.handle("POST /applications", a.createApplication)
	a.handle("GET /applications", a.listApplications, list("id")...)
	a.handle("GET /applications/key", a.getApplicationByKey)
	a.handle("GET /applications/{id}", a.getApplication)
	a.handle("PUT /applications/{id}", a.updateApplication)
	a.handle("POST /applications/{id}/regenerate", a.regenerateApplication)
	a.handle("POST /applications/{id}/unfreeze", a.unfreezeApplication)
	a.handle("POST /decoys", a.createDecoy)
	a.handle("GET /decoys", a.listDecoys)
	a.handle("DELETE /applications/{id}", a.deleteApplication)

	a.handle("GET /logs", a.listLogs, list("entity_type", "entity_id", "start_date", "end_date", "actor_id", "operation", "outcome")...)
	a.handle("GET /logs/entity-types", a.entityTypes)

	a.handle("GET /tenants/self", a.getTenant)
	a.handle("DELETE /tenants/self", a.deleteOwnTenant)
	a.handle("POST /tenants/self/rotate-data-key", a.rotateDataKey)
	a.handle("PUT /tenants/self/purposes", a.setPurposes)

	a.handle("GET /permissions", a.listPermissions, "application_type")

	a.handle("GET /openapi.json", a.openapi)
	a.handle("GET /audit/keys", a.auditKeys)

	a.tokenRoutes()
	a.fpeRoutes()
	a.intentRoutes()
	a.sessionRoutes()
	a.memberRoutes()
	a.reactorRoutes()
	a.proxyRoutes()
	a.webhookRoutes()
	a.webhookDeliveryRoutes()
	a.operatorRoutes()
	a.approvalRoutes()
	a.exportRoutes()
	a.overviewRoutes()
	a.subjectRoutes()
	a.importRoutes()
}

// ServeHTTP serves the API, and reports the request to Options.Observe.
// Every answer carries Cache-Control: no-store and X-Content-Type-Options:
// nosniff (secureHeaders).
// Every request carries a new tokenvault.CallInfo with the client's
// address and its trace id (traceIDOf), so the Vault charges it once against the rate limits and can
// throttle failed authentications by address.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w = &secureHeaders{ResponseWriter: w}
	r = withoutTrailingSlash(r)
	info := &tokenvault.CallInfo{ClientAddress: a.clientAddress(r), TraceID: traceIDOf(r)}
	_, pattern := a.mux.Handler(r)
	info.Route = routeOf(r.Method, pattern)
	if a.observe == nil {
		a.serve(w, r.WithContext(withPurpose(tokenvault.WithCallInfo(r.Context(), info), r)), pattern)
		return
	}
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		route := pattern
		if _, path, ok := strings.Cut(pattern, " "); ok {
			route = path
		}
		if route == "/{$}" {
			route = "/"
		}
		a.observe(r.Context(), Observation{Method: r.Method, Route: route, Status: rec.written(),
			Duration: time.Since(start), TenantID: info.TenantID()})
	}()
	a.serve(rec, r.WithContext(withPurpose(tokenvault.WithCallInfo(r.Context(), info), r)), pattern)
}

// routeOf is the route a denied call's audit line names
// (tokenvault.CallInfo.Route): the mux's pattern, never the path's values,
// with the method in front.
func routeOf(method, pattern string) string {
	if pattern == "" {
		return ""
	}
	if _, _, ok := strings.Cut(pattern, " "); ok {
		return pattern
	}
	return method + " " + pattern
}

// serve turns the mux's own 404 and 405 answers and any panic into
// problems. pattern is the mux's pattern for r, "" when none matches.
func (a *api) serve(w http.ResponseWriter, r *http.Request, pattern string) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			a.logger.Error("httpapi: panic", "method", r.Method, "path", r.URL.Path, "panic", p)
			writeProblem(w, Problem{Type: "about:blank", Title: http.StatusText(500), Status: 500, Detail: "internal error"})
		}
	}()
	if pattern == "" {
		a.mux.ServeHTTP(&problemWriter{ResponseWriter: w}, r)
		return
	}
	// A /proxy call answers in its own shape (invokeProxy checks there).
	if err := twiceAPIKey(r); err != nil && !strings.Contains(pattern, " /proxy/") {
		a.writeError(w, r, err)
		return
	}
	a.mux.ServeHTTP(w, r)
}

func (a *api) clientAddress(r *http.Request) string { return ClientAddress(r, a.trustXFF) }

// ClientAddress is the address the Vault counts a request's calls under
// (the throttle of failed authentications, the rate limits of an
// address): the host of the request's remote address, or with
// trustForwardedFor (Options.TrustForwardedFor) the last entry of
// X-Forwarded-For when it is an IP address (with or without a port). A
// last entry that is not an IP address is not an address: the
// connection's is used, so made-up values ("not-an-ip-7") all count as
// that one address instead of each being a new one. Handlers served
// beside the API on the same server (the hosted elements) take their
// callers' addresses from it too, so that behind a proxy one caller's
// failures are not counted against everyone the proxy serves.
func ClientAddress(r *http.Request, trustForwardedFor bool) string {
	if trustForwardedFor {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			last := xff[len(xff)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if ip, ok := ipAddress(strings.TrimSpace(last)); ok {
				return ip
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// ipAddress returns the IP address s names, alone or with a port.
func ipAddress(s string) (string, bool) {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip.String(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().String(), true
	}
	return "", false
}

// withoutTrailingSlash serves a path with one trailing slash as the path
// without it (/applications/ as /applications, /tokens/x/ as /tokens/x),
// as clients such as the legacy JavaScript SDK send them. Under /proxy/
// the path is the caller's own, forwarded to the destination as it came.
// An encoded slash (/applications/x%2F) is part of an id, not a trailing
// slash: the id "x/" names nothing, as in process.
func withoutTrailingSlash(r *http.Request) *http.Request {
	p := r.URL.Path
	if len(p) < 2 || !strings.HasSuffix(p, "/") || strings.HasPrefix(p, "/proxy/") ||
		!strings.HasSuffix(r.URL.EscapedPath(), "/") {
		return r
	}
	u := *r.URL
	u.Path = p[:len(p)-1]
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	r2 := r.WithContext(r.Context())
	r2.URL = &u
	return r2
}

// root answers GET / with where the API is described, so that a person
// (or a tool) who opens the base URL learns where to go next.
func (a *api) root(w http.ResponseWriter, r *http.Request) {
	doc := "/openapi.json"
	// Mounted under a prefix (http.StripPrefix), the request URI still
	// holds it.
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		if prefix, ok := strings.CutSuffix(u.Path, r.URL.Path); ok {
			doc = prefix + doc
		}
	}
	out := map[string]string{
		"name":    "Token Vault",
		"openapi": doc,
		"detail":  "The OpenAPI document at " + doc + " describes every route. Send an API key in the " + APIKeyHeader + " header.",
	}
	if a.console != "" {
		out["console"] = a.console
		out["detail"] += " The web console is at " + a.console + "."
	}
	writeJSON(w, http.StatusOK, out)
}

func apiKey(r *http.Request) tokenvault.Credential {
	return tokenvault.Credential(r.Header.Get(APIKeyHeader))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// reply writes v with 200, or the error.
func (a *api) reply(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// noContent writes 204, or the error.
func (a *api) noContent(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *api) createApplication(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.CreateApplicationRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	app, err := a.v.CreateApplication(r.Context(), apiKey(r), req)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, app)
}

func (a *api) listApplications(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.ListApplications(r.Context(), apiKey(r), tokenvault.ListApplicationsRequest{IDs: r.URL.Query()["id"], PageRequest: page})
	a.reply(w, r, out, err)
}

func (a *api) getApplicationByKey(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetApplicationByKey(r.Context(), apiKey(r))
	a.reply(w, r, out, err)
}

func (a *api) getApplication(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetApplication(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) updateApplication(w http.ResponseWriter, r *http.Request) {
	var req tokenvault.UpdateApplicationRequest
	if err := a.decodeJSON(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	out, err := a.v.UpdateApplication(r.Context(), apiKey(r), r.PathValue("id"), req)
	a.reply(w, r, out, err)
}

func (a *api) regenerateApplication(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.RegenerateApplicationKey(r.Context(), apiKey(r), r.PathValue("id"))
	a.reply(w, r, out, err)
}

func (a *api) deleteApplication(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.DeleteApplication(r.Context(), apiKey(r), r.PathValue("id")))
}

func (a *api) listLogs(w http.ResponseWriter, r *http.Request) {
	page, err := pageRequest(r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	req := tokenvault.ListLogsRequest{EntityType: q.Get("entity_type"), EntityID: q.Get("entity_id"),
		ActorID: q.Get("actor_id"), Operation: q.Get("operation"), Outcome: q.Get("outcome"), PageRequest: page}
	for _, d := range []struct {
		name string
		dst  **time.Time
	}{{"start_date", &req.StartDate}, {"end_date", &req.EndDate}} {
		s := q.Get(d.name)
		if s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			a.writeError(w, r, invalid(d.name, dateTimeMessage))
			return
		}
		*d.dst = &t
	}
	out, err := a.v.ListLogs(r.Context(), apiKey(r), req)
	a.reply(w, r, out, err)
}

func (a *api) entityTypes(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.EntityTypes(r.Context(), apiKey(r))
	a.reply(w, r, out, err)
}

func (a *api) getTenant(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.GetTenant(r.Context(), apiKey(r))
	a.reply(w, r, out, err)
}

// deleteOwnTenant deletes the caller's tenant: 204, or 202 with the
// pending change when its approval policy holds the deletion; with
// SVC-APPROVAL-ID, the deletion that change approved.
func (a *api) deleteOwnTenant(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get(ApprovalIDHeader); id != "" {
		a.noContent(w, r, a.v.DeleteOwnTenantApproved(r.Context(), apiKey(r), id))
		return
	}
	a.noContent(w, r, a.v.DeleteOwnTenant(r.Context(), apiKey(r)))
}

func (a *api) rotateDataKey(w http.ResponseWriter, r *http.Request) {
	a.noContent(w, r, a.v.RotateDataKey(r.Context(), apiKey(r)))
}

func (a *api) listPermissions(w http.ResponseWriter, r *http.Request) {
	out, err := a.v.ListPermissions(r.Context(), apiKey(r), tokenvault.ApplicationType(r.URL.Query().Get("application_type")))
	a.reply(w, r, out, err)
}
