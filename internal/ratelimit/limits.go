package ratelimit

import (
	"context"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Limits are a Vault's rate limiters; a nil Set is no limit. Each charge
// is made once per call (unit.CallInfo.Once): a transaction function run
// again gets the first run's answer, so a run again is never a free
// second try.
type Limits struct {
	PerKey, PerTenant, AuthFailures, Sessions *Set
}

// ChargeCall counts one call of principal p, whose key's keyed hash is
// mac, against the per-key and per-tenant limits. A public application's
// key is in every browser: one bucket for all of its holders would let
// any of them use up everyone's calls, so each client address has its
// own. Returns RateLimited.
func (l *Limits) ChargeCall(ctx context.Context, mac []byte, p *access.Principal, now time.Time) error {
	if l.PerKey == nil && l.PerTenant == nil {
		return nil
	}
	info := unit.CallOf(ctx)
	return info.Once(unit.ChargeCallLimits, func() error {
		key, tenant := string(mac), p.TenantID
		if p.ActorType == unit.ActorApplication && p.AppType == access.Public {
			addr := "\x00public\x00" + Address(info.ClientAddress)
			key, tenant = key+addr, tenant+addr
		}
		switch refused, wait := TakeBoth(l.PerKey, key, l.PerTenant, tenant, now); refused {
		case nil:
			return nil
		case l.PerKey:
			return Error("with this key", wait)
		default:
			return Error("for this tenant", wait)
		}
	})
}

// AuthFailed counts a failed authentication, whose error is failure,
// against the caller's address, and returns the error to answer: failure,
// or RateLimited when the address has used up its failures (which counts
// nothing more). Only failures are ever throttled: a key that
// authenticates never reaches this.
func (l *Limits) AuthFailed(ctx context.Context, failure error, now time.Time) error {
	info := unit.CallFrom(ctx)
	if l.AuthFailures == nil || info == nil || info.ClientAddress == "" {
		return failure
	}
	err := info.Once(unit.ChargeAuthFailure, func() error {
		if ok, wait := l.AuthFailures.Take(Address(info.ClientAddress), now); !ok {
			return Error("with keys that failed to authenticate from this address", wait)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return failure
}

// ChargeSession counts one session created by public application appID
// from the call's client address. Returns RateLimited.
func (l *Limits) ChargeSession(ctx context.Context, appID string, now time.Time) error {
	if l.Sessions == nil {
		return nil
	}
	info := unit.CallOf(ctx)
	return info.Once(unit.ChargeSessionLimit, func() error {
		name := appID + "\x00" + Address(info.ClientAddress)
		if ok, wait := l.Sessions.Take(name, now); !ok {
			return Error("creating sessions with this application from this address", wait)
		}
		return nil
	})
}

// Sizes reports how many buckets each limit holds.
func (l *Limits) Sizes() map[string]int {
	return map[string]int{
		"key": l.PerKey.Size(), "tenant": l.PerTenant.Size(),
		"auth_failures": l.AuthFailures.Size(), "sessions": l.Sessions.Size(),
	}
}
