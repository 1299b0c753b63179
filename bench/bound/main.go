// Command bound is the floor (bench/floor) plus the durable storage work of
// the Token Vault's requests, and nothing else of the vault: no
// authentication, encryption, fingerprints, rules, request log or metrics.
// It stores in a bbolt file through store/bolt, as cmd/tokenvault does, and
// writes for every request the keys and bytes a vault writes for it (see
// the sizes below), durably, before it answers:
//
//	POST /tokenize     a body of plain values ({"v": "..."}: each value is a
//	                   token) or one token request (an object with "data";
//	                   with "type": "card" a card's sizes). Per token, in one
//	                   Update, group-committed as the vault's are: its record,
//	                   its audit line and the line's entity index entry, and
//	                   for a card its CVC entry. 201 with the ids under the
//	                   body's keys, or a token for a token request.
//	GET /tokens/{id}   reads the record in a View, then appends its audit line
//	                   and index entry (store.Appender: one fdatasync for a
//	                   group of reads, as the vault's reads). 200 with a token
//	                   the size of the vault's answer; 404 when there is none.
//	GET /health        200 "ok".
//
// Loaded with examples/loadgen as the vault is, its rate is about the most
// that any vault writing these bytes durably through store/bolt can reach on
// the machine: bench/run.sh runs it beside the floor and the vault, so that
// a target above the bound's ratio to the floor is seen to be out of reach
// on the machine it ran on, whatever the vault's code does.
//
//	go run ./bench/bound -data /tmp/bound -addr 127.0.0.1:8082
//
// With -nosync it skips every fsync (store/bolt's NoSync), so that a run
// beside a durable one shows what durability costs on the machine.
//
// SIGINT or SIGTERM shuts it down gracefully.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/tokenvault/tokenvault/bench/internal/serve"
	"github.com/tokenvault/tokenvault/store/bolt"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "listen address")
	data := flag.String("data", "", "directory for the bbolt file (created; required)")
	noSync := flag.Bool("nosync", false, "skip fsync: to measure what durability costs, never to serve")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "bound: -data is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *data, &bolt.Options{NoSync: *noSync}); err != nil {
		fmt.Fprintln(os.Stderr, "bound:", err)
		os.Exit(1)
	}
}

// run opens the store in dir with opts and serves on addr until ctx is done.
func run(ctx context.Context, addr, dir string, opts *bolt.Options) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := bolt.Open(filepath.Join(dir, "bound.db"), opts)
	if err != nil {
		return err
	}
	defer st.Close()
	return serve.Until(ctx, addr, newHandler(st))
}
