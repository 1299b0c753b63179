package tokenvault

import (
	"crypto/rand"
	"testing"

	"github.com/tokenvault/tokenvault/store/memory"
)

// TestDefaultOptionsAreTheZeroValues: a Vault opened with DefaultOptions
// resolves every setting exactly as one opened with the zero Options, so
// the function documents what zero means rather than another
// configuration.
func TestDefaultOptionsAreTheZeroValues(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	open := func(opts Options) *Vault {
		t.Helper()
		opts.Store, opts.Keys.MasterKey = memory.New(), key
		opts.Retention.SweepInterval = -1 // no sweeper goroutine in this test
		v, err := Open(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	zero, def := open(Options{}), open(DefaultOptions())
	type bucket struct {
		limit float64
		burst int
		idle  string
	}
	type resolved struct {
		maxPendingSessions, maxPendingPerAddress int
		maxIntents, maxIntentsPerAddress         int
		proxyMaxResponse, codeMaxResult          int64
		webhook, logs, cvc                       string
		authFailures, sessions                   bucket
		perKey, perTenant                        bool
		workersMax                               int
		chain                                    AuditChainOptions
		deniedLines                              int
	}
	of := func(v *Vault) resolved {
		return resolved{
			maxPendingSessions: v.maxPendingSessions, maxPendingPerAddress: v.maxPendingPerAddress,
			maxIntents: v.maxIntents, maxIntentsPerAddress: v.maxIntentsPerAddress,
			proxyMaxResponse: v.proxyMaxResponse, codeMaxResult: v.codeMaxResult,
			webhook: v.webhookBackoff.String(), logs: v.logRetention.String(), cvc: v.cvcRetention.String(),
			authFailures: bucket{v.limits.AuthFailures.Limit(), v.limits.AuthFailures.Burst(), v.limits.AuthFailures.Idle().String()},
			sessions:     bucket{v.limits.Sessions.Limit(), v.limits.Sessions.Burst(), v.limits.Sessions.Idle().String()},
			perKey:       v.limits.PerKey != nil, perTenant: v.limits.PerTenant != nil,
			workersMax:  v.Stats().CodeWorkersMax,
			chain:       v.chainOpts,
			deniedLines: v.denials.bound,
		}
	}
	if z, d := of(zero), of(def); z != d {
		t.Errorf("Open(DefaultOptions()) resolved %+v, Open(Options{}) resolved %+v", d, z)
	}
	if got, want := of(def).workersMax, DefaultOptions().Code.Workers; got != want {
		t.Errorf("CodeWorkersMax = %d, DefaultOptions().Code.Workers = %d", got, want)
	}
}
