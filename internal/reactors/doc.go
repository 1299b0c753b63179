// Package reactors is the feature of tenant code: reactors, the formulas
// they are made from, and proxies. It holds their stored records
// (Record, FormulaRecord, ProxyRecord), each in its own encoding and with
// its format's history in its doc (golden fixtures in the root's
// testdata/records pin every version's bytes), and the API types those
// encodings hold (ConfigurationDeclaration, RequestParameter,
// ProxyTransform, Ref), which the root names by aliases so that nothing
// a user sees changed when they moved.
//
// It owns the mechanism of tenant code, which the root's Vault methods
// call once they have authorized the caller:
//
//   - the arguments of an invocation: PrepareArgs applies a formula's
//     request parameters (the seven rules), after detokenization;
//   - a formula's contract: CheckDeclarations checks its configuration
//     declarations and request parameters, CheckConfiguration a reactor's
//     configuration against them;
//   - formulas (formula.go): Formula and FormulaRequest (the root names
//     them by aliases), CheckFormula, NewFormula, LoadFormula,
//     MustFormula, MustOwnFormula (official formulas are the host's),
//     Formulas and FormulaPosition for a list;
//   - reactors (reactor.go): Reactor (aliased by the root), ReactorOf,
//     MustReactor, Reactors, CheckFormulaConfiguration, SameJSON, and
//     NameMatches, the name filter of lists of reactors and proxies;
//   - the signature of an asynchronous invocation's callback
//     (callback.go): CallbackSecret, ParseCallbackSecret, SignCallback and
//     StandardCallbackSecret, and CallbackErrorOf, what its body says of
//     a failure (CallbackError, the root's WebhookError);
//   - proxies (proxy.go): Proxy and ProxyRequest (aliased by the root),
//     NewProxyKey, ApplyProxyRequest, MustProxy, and ProxyOf and
//     ProxyRecordOf between the API's proxy and its record;
//     CheckProxyRequest and ProxyTransformCode check a request
//     (proxy_check.go);
//   - where the records are kept (store.go): PutReactor, DeleteReactor,
//     PutFormula (official formulas outside every tenant), DeleteFormula,
//     PutProxy and DeleteProxy with the lookup of the proxy key,
//     ProxyByKey, ListReactors and ListProxies (ListFilter), and
//     CheckApplication and CheckProxyApplication, the application a
//     reactor or proxy acts as; the Vault's methods never build a key;
//   - the events of reactors, proxies and invocations (events.go):
//     EmitReactor, EmitProxy and EmitInvocation, with views that leave
//     out code, configuration values, keys and a URL's credentials;
//   - asynchronous invocations (async.go): Async runs them in the
//     background within each tenant's bounds (MaxAsyncInvocations,
//     MaxPendingCallbacks) and delivers their Callback, signed and
//     retried with backoff, reporting each CallbackOutcome; the Vault
//     builds one in Open and stops it in Close;
//   - what a proxy makes of a call and an answer: KindOfBody, FormObject
//     and EncodeBody for bodies, CheckHeaders, ForwardHeaders,
//     ResponseHeaders, HeaderObject and CodeHeaders for headers, Forward
//     for the outbound call and Code.TransformResult for what a transform
//     returned;
//   - saving code: Code.CheckIn and Code.UpdateChecked check code met in
//     a write transaction with no transaction open, then run it again
//     (code_saved.go);
//   - running code: Code checks and runs it in sandbox worker processes,
//     carries out its fetch calls through the outbound client it is given
//     (bounded by MaxFetchesPerInvocation and the sizes beside it), and
//     explains every outcome as a *unit.Error: the code's own message,
//     never a host detail.
//
// It guarantees the messages and kinds the API shows (tests compare them).
// It does not authorize, detokenize, log or tokenize: the root does, in
// its transactions (reactors.go, proxy.go and the *_invoke.go files),
// and builds Code and Async from its options. It never imports the root.
package reactors
