package events_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// The kill -9 test runs the Vault in a child process: this test binary
// again, running TestWebhookCrashChild with the environment below.
const (
	crashChildEnv = "TOKENVAULT_WEBHOOK_CRASH_CHILD" // "load" or "drain"
	crashDirEnv   = "TOKENVAULT_WEBHOOK_CRASH_DIR"   // the data directory
	crashURLEnv   = "TOKENVAULT_WEBHOOK_CRASH_URL"   // the receiver
	crashKeyEnv   = "TOKENVAULT_WEBHOOK_CRASH_KEY"   // the master key, hex
)

// TestWebhookCrashChild is the child process of
// TestWebhookKillNineLosesNoEvent: it opens a Vault on a bbolt file in
// the data directory (subscribing a webhook to token.created on its first
// run), then, in "load" mode, creates tokens one after another and prints
// "ack <id>" once each is acknowledged, until it is killed; in "drain"
// mode it only delivers.
func TestWebhookCrashChild(t *testing.T) {
	mode := os.Getenv(crashChildEnv)
	if mode == "" {
		t.Skip("the child process of TestWebhookKillNineLosesNoEvent")
	}
	dir := os.Getenv(crashDirEnv)
	key, _ := hex.DecodeString(os.Getenv(crashKeyEnv))
	ctx := context.Background()
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Path: filepath.Join(dir, "vault.db"), Now: time.Now, Keys: tokenvault.KeyOptions{MasterKey: key},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
		Outbound:  tokenvault.OutboundOptions{AllowPrivateDestinations: true},
		Webhooks: tokenvault.WebhookOptions{Schedule: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, time.Second},
			PollInterval: 20 * time.Millisecond, Timeout: time.Second, Lease: 2 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "app-key")
	appKey, err := os.ReadFile(state)
	if os.IsNotExist(err) {
		boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := vaulttest.PutDeliveryWebhook(v, boot.Tenant.ID, vaulttest.DeliveryHook{Name: "crash", URL: os.Getenv(crashURLEnv),
			Secret: hookSecret, Events: []string{tokenvault.EventTokenCreated}}); err != nil {
			t.Fatal(err)
		}
		app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
			Name: "load", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate}})
		if err != nil {
			t.Fatal(err)
		}
		appKey = []byte(app.Key)
		if err := os.WriteFile(state+".tmp", appKey, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(state+".tmp", state); err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(os.Stdout, "ready")
	for mode == "load" {
		tok, err := v.CreateToken(ctx, tokenvault.Credential(appKey), tokenvault.TokenRequest{Type: "token", Data: "x"})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(os.Stdout, "ack "+tok.ID)
	}
	select {} // until killed
}

// child is a running TestWebhookCrashChild.
type child struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	acked []string
	ready chan struct{}
	done  chan struct{}
}

func startChild(t *testing.T, mode, dir, url string, key []byte) *child {
	t.Helper()
	c := &child{ready: make(chan struct{}), done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestWebhookCrashChild$", "-test.v=false")
	c.cmd.Env = append(os.Environ(), crashChildEnv+"="+mode, crashDirEnv+"="+dir, crashURLEnv+"="+url, crashKeyEnv+"="+hex.EncodeToString(key))
	c.cmd.Stderr = os.Stderr
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "ready":
				close(c.ready)
			case strings.HasPrefix(line, "ack "):
				c.mu.Lock()
				c.acked = append(c.acked, strings.TrimPrefix(line, "ack "))
				c.mu.Unlock()
			}
		}
		io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	select {
	case <-c.ready:
	case <-c.done:
		t.Fatal("the child exited before it was ready")
	case <-time.After(60 * time.Second):
		t.Fatal("the child was not ready in 60 s")
	}
	return c
}

func (c *child) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.acked)
}

// kill9 kills the child with SIGKILL and returns the ids it acknowledged.
func (c *child) kill9(t *testing.T) []string {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.done
	c.cmd.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.acked...)
}

// TestWebhookKillNineLosesNoEvent: a Vault process under a tokenize load
// with a webhook subscribed to token.created is killed with SIGKILL,
// three times; after each restart every token it acknowledged has its
// token.created event delivered (counted by token id at the receiver).
func TestWebhookKillNineLosesNoEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process and kills it (about 10 s)")
	}
	var mu sync.Mutex
	got := map[string]bool{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			Event struct {
				Data struct {
					Token struct{ ID string } `json:"token"`
				} `json:"data"`
			} `json:"event"`
		}
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got[ev.Event.Data.Token.ID] = true
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	dir, key := t.TempDir(), vaulttest.NewMasterKey()
	var all []string
	for round := 1; round <= 3; round++ {
		c := startChild(t, "load", dir, rcv.URL, key)
		for deadline := time.Now().Add(30 * time.Second); c.count() < 20; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d tokens acknowledged in 30 s", round, c.count())
			}
		}
		time.Sleep(time.Duration(100*round) * time.Millisecond)
		acked := c.kill9(t)
		all = append(all, acked...)
		t.Logf("round %d: killed after %d acknowledged tokens", round, len(acked))
	}
	d := startChild(t, "drain", dir, rcv.URL, key)
	missing := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, id := range all {
			if !got[id] {
				out = append(out, id)
			}
		}
		return out
	}
	for deadline := time.Now().Add(60 * time.Second); len(missing()) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d acknowledged tokens have no delivered event: %v", len(missing()), len(all), missing())
		}
	}
	d.kill9(t)
	t.Logf("%d acknowledged tokens, every event delivered", len(all))
}
