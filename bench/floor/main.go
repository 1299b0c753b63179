// Command floor is the smallest useful HTTP server: GET /health answers 200
// "ok", nothing else is routed, and nothing is logged. bench/run.sh loads it
// with examples/loadgen -mode empty to measure what net/http and the load
// generator cost on their own, the floor Token Vault's figures compare with.
//
//	go run ./bench/floor -addr 127.0.0.1:8081
//
// SIGINT or SIGTERM shuts it down gracefully.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/tokenvault/tokenvault/bench/internal/serve"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve.Until(ctx, *addr, handler()); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// handler serves GET /health.
func handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})
	return mux
}
