package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
)

// config is what flags and environment decide.
type config struct {
	addr    string
	dataDir string
}

func parseConfig(args []string, getenv func(string) string) (config, error) {
	c := config{addr: "127.0.0.1:8080", dataDir: "data"}
	if s := getenv("TOKENVAULT_ADDR"); s != "" {
		c.addr = s
	}
	if s := getenv("TOKENVAULT_DATA"); s != "" {
		c.dataDir = s
	}
	fl := flag.NewFlagSet("server", flag.ContinueOnError)
	fl.StringVar(&c.addr, "addr", c.addr, "listen address (env TOKENVAULT_ADDR)")
	fl.StringVar(&c.dataDir, "data", c.dataDir, "data directory (env TOKENVAULT_DATA)")
	if err := fl.Parse(args); err != nil {
		return c, err
	}
	return c, nil
}

// run serves until ctx is done. ready, when not nil, receives the listening
// address once the server accepts connections (for tests).
func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer, ready chan<- string) error {
	cfg, err := parseConfig(args, getenv)
	if err != nil {
		return err
	}
	log := logger(out)
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return err
	}
	masterKey, err := loadMasterKey(cfg.dataDir, getenv)
	if err != nil {
		return err
	}
	dbPath := filepath.Join(cfg.dataDir, "vault.db")
	_, statErr := os.Stat(dbPath)
	firstRun := errors.Is(statErr, fs.ErrNotExist)

	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: dbPath, MasterKey: masterKey, Logger: log, Mailer: logMailer{log}})
	if err != nil {
		return err
	}
	defer v.Close()
	keyFile := filepath.Join(cfg.dataDir, "management.key")
	if firstRun {
		boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Default"})
		if err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
		if err := os.WriteFile(keyFile, []byte(boot.Application.Key+"\n"), 0o600); err != nil {
			return err
		}
		// Printed once, on purpose: this is the only place an operator sees
		// the first key. It is not written to the log.
		fmt.Fprintf(out, "\nCreated tenant %s with a management application.\nIts API key (shown once, also saved to %s):\n\n    %s\n\n",
			boot.Tenant.ID, keyFile, boot.Application.Key)
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           logRequests(log, httpapi.New(v, httpapi.Options{Logger: log})),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          nil,
	}
	log.Info("listening", "addr", "http://"+ln.Addr().String(), "data", cfg.dataDir,
		"key_file", keyFile, "try", fmt.Sprintf("curl -H \"SVC-API-KEY: $(cat %s)\" http://%s/applications", keyFile, ln.Addr()))
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	return nil
}

// loadMasterKey reads TOKENVAULT_MASTER_KEY, or <data>/master.key, creating
// that file (0600) with a random key on first run.
func loadMasterKey(dataDir string, getenv func(string) string) ([]byte, error) {
	if s := strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")); s != "" {
		return decodeKey(s, "TOKENVAULT_MASTER_KEY")
	}
	path := filepath.Join(dataDir, "master.key")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, 32)
		rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
			f.Close()
			return nil, err
		}
		return key, f.Close()
	}
	if err != nil {
		return nil, err
	}
	return decodeKey(strings.TrimSpace(string(b)), path)
}

func decodeKey(s, from string) ([]byte, error) {
	key, err := hex.DecodeString(s)
	if err != nil || len(key) != 32 {
		// Never echo the value: it may be a real key with a typo.
		return nil, fmt.Errorf("%s must hold 64 hex digits (a 32-byte key)", from)
	}
	return key, nil
}
