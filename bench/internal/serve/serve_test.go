package serve

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	h := http.NotFoundHandler()
	if err := Until(context.Background(), "256.0.0.1:1", h); err == nil {
		t.Error("Until on an address that cannot be listened on = nil, want its error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Until(ctx, "127.0.0.1:0", h) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Until after ctx is done = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Until did not return after ctx was done")
	}
}
