package reactors

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/backoff"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/webhooks"
)

// Asynchronous invocations: a run in the background and the delivery of
// its outcome to the caller's callback_url, signed with the tenant's
// callback secret, retried with backoff. Each tenant's work in progress
// is bounded, so that one tenant cannot pile up goroutines without limit
// or take what others need.

// Response is what an invocation returns: Raw is what the code returned
// as raw, Tokens what it returned under tokenize, tokenized. An
// asynchronous invocation returns only its InvocationID.
type Response struct {
	Tokens       any    `json:"tokens,omitempty"`
	Raw          any    `json:"raw,omitempty"`
	InvocationID string `json:"invocation_id,omitempty"`
}

// Callback is the JSON body POSTed to the callback_url of an asynchronous
// invocation (the root's Webhook, which documents it for receivers).
// Exactly one of Result and Error is set.
type Callback struct {
	InvocationID string         `json:"invocation_id"`
	ReactorID    string         `json:"reactor_id"`
	TenantID     string         `json:"tenant_id"`
	Status       string         `json:"status"` // "succeeded" or "failed"
	Result       *Response      `json:"result,omitempty"`
	Error        *CallbackError `json:"error,omitempty"`
	DeliveredAt  time.Time      `json:"delivered_at"`
}

// CallbackSignatureHeader carries SignCallback's signature of a callback.
const CallbackSignatureHeader = "SVC-Signature"

// callbackAttempts is how many POSTs a callback gets before it is given up.
const callbackAttempts = 5

// Bounds on one tenant's asynchronous work (Async.Start).
const (
	// MaxAsyncInvocations bounds a tenant's asynchronous invocations
	// waiting for a worker or running.
	MaxAsyncInvocations = 64
	// MaxPendingCallbacks bounds a tenant's callbacks being delivered,
	// retries included.
	MaxPendingCallbacks = 256
)

// CallbackOutcome is how a callback's delivery ended, for the Vault's
// metrics (the root's WebhookOutcome).
type CallbackOutcome string

// Outcomes of a callback's delivery.
const (
	CallbackDelivered CallbackOutcome = "delivered" // the receiver answered 2xx
	CallbackFailed    CallbackOutcome = "failed"    // every attempt failed
	CallbackCanceled  CallbackOutcome = "canceled"  // the Vault closed before it succeeded
	CallbackNotSent   CallbackOutcome = "not_sent"  // its signing secret could not be read
)

// Async runs asynchronous invocations and delivers their callbacks. The
// Vault builds one in Open; Stop and Wait end it in Close. It is safe for
// concurrent use.
type Async struct {
	// Background is canceled when the Vault closes: runs and deliveries
	// in progress stop.
	Background context.Context
	// HTTPClient posts callbacks (the Vault's outbound client).
	HTTPClient *http.Client
	// Backoff is the base of the jittered backoff between attempts.
	Backoff time.Duration
	// Now dates each attempt (DeliveredAt, webhook-timestamp).
	Now func() time.Time
	// Logger hears of callbacks not delivered.
	Logger *slog.Logger
	// Secret reads tenant tid's callback secret (CallbackSecret, in a
	// transaction of its own).
	Secret func(ctx context.Context, tid string) ([]byte, error)
	// Delivered, if set, is told how each delivery ended and after how
	// many POSTs (Options.Metrics).
	Delivered func(o CallbackOutcome, attempts int)

	mu       sync.Mutex // guards what follows
	closed   bool
	byTenant map[string]*asyncCount
	// running and delivering add up byTenant, for Stats.
	running, delivering int
	wg                  sync.WaitGroup
}

// asyncCount is one tenant's asynchronous work in progress.
type asyncCount struct{ running, delivering int }

// Start runs run in the background, for up to timeout, tells ended how
// it ended, and delivers its outcome to url as cb (the invocation, the
// reactor and the tenant filled in). After Stop, and past the tenant's
// bounds, it refuses with Unavailable.
func (a *Async) Start(cb Callback, url string, timeout time.Duration, run func(context.Context) (*Response, error), ended func(error)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return unit.Errorf(unit.Unavailable, "the vault is closing")
	}
	if a.byTenant == nil {
		a.byTenant = map[string]*asyncCount{}
	}
	tid := cb.TenantID
	c := a.byTenant[tid]
	if c == nil {
		c = &asyncCount{}
		a.byTenant[tid] = c
	}
	if c.running >= MaxAsyncInvocations || c.delivering >= MaxPendingCallbacks {
		return unit.Errorf(unit.Unavailable, "too many asynchronous invocations of this tenant in progress; retry later")
	}
	c.running++
	a.running++
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		ctx, cancel := context.WithTimeout(a.Background, timeout)
		res, err := run(ctx)
		cancel()
		a.mu.Lock()
		c.running--
		c.delivering++
		a.running--
		a.delivering++
		a.mu.Unlock()
		ended(err)
		cb.Status, cb.Result = "succeeded", res
		if err != nil {
			cb.Status, cb.Result = "failed", nil
			cb.Error = CallbackErrorOf(err)
		}
		a.deliver(url, cb)
		a.mu.Lock()
		a.delivering--
		if c.delivering--; c.running == 0 && c.delivering == 0 {
			delete(a.byTenant, tid)
		}
		a.mu.Unlock()
	}()
	return nil
}

// Stop refuses new work; the caller cancels Background and then Waits.
func (a *Async) Stop() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
}

// Wait returns once every run and delivery started has ended.
func (a *Async) Wait() { a.wg.Wait() }

// Stats returns the invocations waiting for a worker or running, and the
// callbacks being delivered, of every tenant.
func (a *Async) Stats() (running, delivering int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running, a.delivering
}

// deliver POSTs cb, retrying with exponential backoff (jittered, see
// internal/backoff) until the receiver answers 2xx, callbackAttempts
// tries are spent, or Background is canceled.
func (a *Async) deliver(url string, cb Callback) {
	outcome, attempts := a.tryDeliver(url, cb)
	if a.Delivered != nil {
		a.Delivered(outcome, attempts)
	}
}

// tryDeliver is deliver, returning how it ended and after how many POSTs.
func (a *Async) tryDeliver(url string, cb Callback) (CallbackOutcome, int) {
	secret, err := a.Secret(a.Background, cb.TenantID)
	if err != nil {
		a.Logger.Error("tokenvault: webhook not delivered", "invocation", cb.InvocationID, "err", err)
		if a.Background.Err() != nil {
			return CallbackCanceled, 0
		}
		return CallbackNotSent, 0
	}
	wait := backoff.Backoff{Base: a.Backoff}
	for attempt := 1; ; attempt++ {
		cb.DeliveredAt = a.Now().UTC()
		body, _ := json.Marshal(cb)
		std, err := webhooks.Headers(cb.InvocationID, cb.DeliveredAt, body, StandardCallbackSecret(secret))
		if err == nil {
			err = a.post(url, body, SignCallback(secret, body), std)
		}
		if err == nil {
			return CallbackDelivered, attempt
		}
		if attempt == callbackAttempts {
			a.Logger.Warn("tokenvault: webhook delivery failed", "invocation", cb.InvocationID, "attempts", attempt, "err", err)
			return CallbackFailed, attempt
		}
		select {
		case <-a.Background.Done():
			return CallbackCanceled, attempt
		case <-time.After(wait.Next()):
		}
	}
}

// callbackStatusError is a receiver's answer other than 2xx.
type callbackStatusError int

func (e callbackStatusError) Error() string { return "receiver answered " + http.StatusText(int(e)) }

// post makes one attempt, bounded to 30 seconds.
func (a *Async) post(url string, body []byte, signature string, std http.Header) error {
	ctx, cancel := context.WithTimeout(a.Background, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range std {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(CallbackSignatureHeader, signature)
	res, err := a.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return callbackStatusError(res.StatusCode)
	}
	return nil
}
