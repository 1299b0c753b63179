package events

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Key names a webhook: its tenant and id.
type Key struct{ Tenant, Webhook string }

// Config is what a Dispatcher needs of the Vault that makes it.
type Config struct {
	// Options are the Vault's webhook options; NewDispatcher fills their
	// defaults in (Options.WithDefaults).
	Options Options
	// HTTPClient makes the attempts. Nil: Policy.Client().
	HTTPClient *http.Client
	// Policy is the outbound policy every attempt's URL is held to again.
	Policy outbound.Policy
	// Now is the Vault's clock.
	Now func() time.Time
	// IDs makes the ids of new deliveries.
	IDs *unit.IDSource
	// Logger records what the dispatcher does not return: events dropped
	// at a cap. Nil: slog.Default().
	Logger *slog.Logger
	// Dropped, if set, is called for each event dropped at a cap once
	// the write that dropped it has committed (the Vault's metrics).
	Dropped func()
	// Subscriptions returns tenant tid's webhooks (id, status, events) as
	// transaction t sees them: Service.Subscriptions, the cache read under
	// the Vault's identity generation (subscriptions_read.go).
	Subscriptions func(t *unit.Tx, tid string) ([]*Webhook, error)
	// Work runs the dispatcher's units of work: finding, claiming and
	// recording deliveries, counting pending ones.
	Work *unit.Work
	// TenantGone is what reading a record of a tenant being deleted
	// returns (barrier.Config.TenantGone): its deliveries are dropped.
	TenantGone error
	// IsMember reports whether email is a member's of tenant tid: only
	// then does a webhook-disabled mail carry the webhook's name and URL.
	IsMember func(t *unit.Tx, tid, email string) (bool, error)
	// Mailer sends the webhook-disabled mails when it is a Notifier.
	Mailer any
	// Outcome and AutoDisabled, if set, are told how each attempt ended
	// and of each webhook the Vault disabled (the Vault's metrics).
	Outcome      func(o Outcome, lag time.Duration)
	AutoDisabled func(reason string)
}

// Dispatcher is the delivery state of one Vault in this instance: what
// wakes the dispatcher and which webhooks to look at, the attempt slots
// in flight (Options.ConcurrencyPerWebhook and ConcurrencyPerTenant, so
// a slow or dead receiver holds only its own), the bounds on the
// webhook-disabled mails, the pending deliveries counted by webhook, and
// each tenant's cached subscriptions. Run drives it until the Vault
// closes; its methods are safe for concurrent use.
type Dispatcher struct {
	cfg Config
	// bg is Run's context: the attempts' and their records'.
	bg   context.Context
	wake chan struct{}
	mu   sync.Mutex
	// hot are the webhooks to look at on the next wake: deliveries were
	// queued to them, or one of their attempts ended.
	hot map[Key]bool
	// perHook and perTenant count attempts in flight.
	perHook   map[Key]int
	perTenant map[string]int
	wg        sync.WaitGroup
	notices   noticeLimiter
	pending   PendingCounts
	subs      SubscriptionCache
}

// NewDispatcher returns the delivery state of a Vault configured by cfg.
func NewDispatcher(cfg Config) *Dispatcher {
	cfg.Options = cfg.Options.WithDefaults()
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = cfg.Policy.Client()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.IDs == nil {
		cfg.IDs = new(unit.IDSource)
	}
	return &Dispatcher{cfg: cfg, bg: context.Background(), wake: make(chan struct{}, 1), hot: map[Key]bool{}, perHook: map[Key]int{}, perTenant: map[string]int{}}
}

// Options are the options d runs by, with their defaults filled in.
func (d *Dispatcher) Options() Options { return d.cfg.Options }

// Pending is d's counts of pending deliveries.
func (d *Dispatcher) Pending() *PendingCounts { return &d.pending }

// Subscriptions is d's cache of each tenant's webhooks.
func (d *Dispatcher) Subscriptions() *SubscriptionCache { return &d.subs }

// Woken delivers a value when WakeFor or Poke was called since the last
// receive.
func (d *Dispatcher) Woken() <-chan struct{} { return d.wake }

// WakeFor has the dispatcher look at webhook k now.
func (d *Dispatcher) WakeFor(k Key) {
	d.mu.Lock()
	d.hot[k] = true
	d.mu.Unlock()
	d.Poke()
}

// Poke wakes the dispatcher without naming a webhook to look at (it
// takes the pending counts wanted).
func (d *Dispatcher) Poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// TakeHot returns the webhooks WakeFor named since the last call.
func (d *Dispatcher) TakeHot() []Key {
	d.mu.Lock()
	defer d.mu.Unlock()
	return takeKeys(d.hot)
}

// takeKeys returns the webhooks of set and empties it; the caller holds
// the lock that guards set.
func takeKeys(set map[Key]bool) []Key {
	out := make([]Key, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	clear(set)
	return out
}

// Reserve takes up to n attempt slots of webhook k, and returns how many
// it took.
func (d *Dispatcher) Reserve(k Key, n int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	o := d.cfg.Options
	n = min(n, o.ConcurrencyPerWebhook-d.perHook[k], o.ConcurrencyPerTenant-d.perTenant[k.Tenant])
	if n <= 0 {
		return 0
	}
	d.perHook[k] += n
	d.perTenant[k.Tenant] += n
	return n
}

// Release gives back n slots Reserve took.
func (d *Dispatcher) Release(k Key, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.perHook[k] -= n; d.perHook[k] <= 0 {
		delete(d.perHook, k)
	}
	if d.perTenant[k.Tenant] -= n; d.perTenant[k.Tenant] <= 0 {
		delete(d.perTenant, k.Tenant)
	}
}

// Go runs attempt in a goroutine of its own, holding one of webhook k's
// slots (which Reserve took): when it returns, the slot is given back and
// the dispatcher woken for k.
func (d *Dispatcher) Go(k Key, attempt func()) {
	d.wg.Go(func() {
		defer d.WakeFor(k)
		defer d.Release(k, 1)
		attempt()
	})
}

// Wait waits for the attempts Go started.
func (d *Dispatcher) Wait() { d.wg.Wait() }

// AllowNotice reports whether a webhook-disabled mail about webhook k
// may go at now, and if so counts it (notices.go).
func (d *Dispatcher) AllowNotice(k Key, now time.Time) bool {
	return d.notices.allow(k.Tenant, k.Webhook, now)
}
