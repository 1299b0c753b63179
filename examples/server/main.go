// Command server runs Token Vault as a standalone HTTP service.
//
//	go run ./examples/server
//
// With no flags it stores data in ./data/vault.db (bbolt), creates a master
// key file ./data/master.key (0600) on first run unless TOKENVAULT_MASTER_KEY
// holds one (64 hex digits), creates a tenant with a management application
// on first run, prints that application's key once and writes it to
// ./data/management.key (0600), and listens on 127.0.0.1:8080.
//
// Flags and environment:
//
//	-addr  TOKENVAULT_ADDR        listen address (default 127.0.0.1:8080)
//	-data  TOKENVAULT_DATA        data directory (default ./data)
//	       TOKENVAULT_MASTER_KEY  master key, 64 hex digits (default: <data>/master.key)
//	-store TOKENVAULT_STORE       bolt (default) or postgres
//	-dsn   TOKENVAULT_DSN         PostgreSQL connection string, for -store postgres
//	-schema TOKENVAULT_PG_SCHEMA  PostgreSQL schema (default tokenvault)
//	-tls-cert, -tls-key  TOKENVAULT_TLS_CERT, TOKENVAULT_TLS_KEY  serve HTTPS with this PEM pair
//
// GET /healthz answers 200 while the process serves; GET /readyz answers 200
// when the store answers (503 otherwise). Neither needs a key.
//
//	TOKENVAULT_ALLOW_PRIVATE_DESTINATIONS=true  let proxies and webhooks
//	                       reach loopback and private addresses (refused by default)
//
// Several instances can serve one PostgreSQL database: give them the same
// -dsn, -schema and master key (TOKENVAULT_MASTER_KEY). The first instance
// to start on an empty database bootstraps the tenant; start one first.
//
// Tenant invitations are "sent" by writing the e-mail, acceptance token
// included, to the log (see logMailer for plugging in SMTP).
//
// SIGINT or SIGTERM shuts it down gracefully: it stops accepting
// connections, requests in flight finish (for up to 30 s; connections still
// busy after that are closed) and the database is closed cleanly.
//
// Timeouts: request headers must arrive within 10 s and the whole request
// within 30 s (ReadHeaderTimeout, ReadTimeout); a response must be written
// within 2 minutes of the request's headers (WriteTimeout: room for a proxy
// call, whose destination may take up to 60 s, and its transforms); an idle
// keep-alive connection is closed after 2 minutes (IdleTimeout).
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// logger writes structured logs to w.
func logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
