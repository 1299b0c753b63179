// Package serve runs the benchmark servers (bench/floor, bench/bound)
// until they are told to stop.
package serve

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Until serves h on addr until ctx is done, then shuts down gracefully,
// giving requests in flight 10 seconds. It returns the listener's error
// (the address is taken) or the shutdown's.
func Until(ctx context.Context, addr string, h http.Handler) error {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
