package vaulttest_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestMultiInstanceIdempotency sends one request with one idempotency key
// from goroutines split across two instances on one PostgreSQL database:
// the claim is taken in a store transaction, so exactly one runs, the
// others are Conflict while it runs, and afterwards both instances answer
// its response.
func TestMultiInstanceIdempotency(t *testing.T) {
	p := vaulttest.NewPGPair(t)
	ctx := context.Background()
	boot := p.Tenant(t)
	app := vaulttest.PGCreator(t, p.A, boot.Application.Key)
	req := tokenvault.IdempotentRequest{Operation: "POST /tokens", Body: []byte(`{"type":"token","data":"x"}`)}

	const callers = 8
	var runs, conflicts atomic.Int32
	release := make(chan struct{})
	var others sync.WaitGroup
	others.Add(callers - 1)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		v := p.A
		if i%2 == 1 {
			v = p.B
		}
		wg.Go(func() {
			<-start
			resp, replayed, err := v.Idempotent(ctx, app.Key, "same-key", req, func(ctx context.Context) (*tokenvault.IdempotentResponse, error) {
				runs.Add(1)
				others.Wait() // every other caller has had its answer
				<-release
				tok, err := v.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "x"})
				if err != nil {
					return nil, err
				}
				return &tokenvault.IdempotentResponse{Status: 201, Body: []byte(tok.ID)}, nil
			})
			switch {
			case tokenvault.ErrorKind(err) == tokenvault.Conflict:
				conflicts.Add(1)
				others.Done()
			case err != nil:
				t.Errorf("caller %d: %v", i, err)
				others.Done()
			case replayed:
				t.Errorf("caller %d was answered a kept response %q while the first still ran", i, resp.Body)
				others.Done()
			}
		})
	}
	close(start)
	others.Wait()
	close(release)
	wg.Wait()
	if runs.Load() != 1 || conflicts.Load() != callers-1 {
		t.Fatalf("%d runs and %d conflicts, want 1 and %d", runs.Load(), conflicts.Load(), callers-1)
	}

	var kept string
	for i, v := range []*tokenvault.Vault{p.A, p.B} {
		resp, replayed, err := v.Idempotent(ctx, app.Key, "same-key", req, func(context.Context) (*tokenvault.IdempotentResponse, error) {
			t.Errorf("instance %d ran a repeat", i)
			return nil, nil
		})
		if err != nil || !replayed {
			t.Fatalf("repeat on instance %d = %v, replayed %v", i, err, replayed)
		}
		if kept == "" {
			kept = string(resp.Body)
		} else if string(resp.Body) != kept {
			t.Errorf("instance %d answered %q, the other %q", i, resp.Body, kept)
		}
	}
	page, err := p.B.ListTokens(ctx, app.Key, tokenvault.ListTokensRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if page.Pagination.TotalItems != 1 {
		t.Errorf("%d tokens exist, want 1", page.Pagination.TotalItems)
	}
}

// TestMultiInstanceIdempotencyLease: a claim left by an instance that
// stopped answering (here: still running past its lease) is taken over by
// the other instance once the lease ends, and the late first run does not
// overwrite the taker's response.
func TestMultiInstanceIdempotencyLease(t *testing.T) {
	p := vaulttest.NewPGPair(t)
	ctx := context.Background()
	boot := p.Tenant(t)
	app := vaulttest.PGCreator(t, p.A, boot.Application.Key)
	req := tokenvault.IdempotentRequest{Operation: "op", Body: []byte("b")}
	answer := func(body string) func(context.Context) (*tokenvault.IdempotentResponse, error) {
		return func(context.Context) (*tokenvault.IdempotentResponse, error) {
			return &tokenvault.IdempotentResponse{Status: 201, Body: []byte(body)}, nil
		}
	}

	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.A.Idempotent(ctx, app.Key, "k", req, func(ctx context.Context) (*tokenvault.IdempotentResponse, error) {
			close(started)
			<-release
			return answer("from A")(ctx)
		})
	}()
	<-started
	_, _, err := p.B.Idempotent(ctx, app.Key, "k", req, answer("from B"))
	vaulttest.WantKind(t, "B while A holds the claim", err, tokenvault.Conflict)
	p.Clock.Advance(tokenvault.IdempotencyLease)
	resp, replayed, err := p.B.Idempotent(ctx, app.Key, "k", req, answer("from B"))
	if err != nil || replayed || string(resp.Body) != "from B" {
		t.Fatalf("B after the lease = %v, replayed %v, %v; want B's own run", resp, replayed, err)
	}
	close(release)
	<-done
	resp, replayed, err = p.A.Idempotent(ctx, app.Key, "k", req, answer("again"))
	if err != nil || !replayed || string(resp.Body) != "from B" {
		t.Errorf("repeat on A = %v, replayed %v, %v; want B's kept response", resp, replayed, err)
	}
}
