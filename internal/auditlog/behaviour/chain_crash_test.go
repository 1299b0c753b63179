package auditlog_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// The chain's kill -9 test runs the Vault in a child process: this test
// binary again, running TestChainCrashChild with the environment below.
const (
	chainCrashDirEnv = "TOKENVAULT_CHAIN_CRASH_DIR" // the data directory; set: be the child
	chainCrashKeyEnv = "TOKENVAULT_CHAIN_CRASH_KEY" // the master key, hex
)

// chainCrashLease is the linker lease of the kill -9 test's Vaults: a
// killed child holds it, and the next Vault links once it expires.
const chainCrashLease = 2 * time.Second

// openChainCrashVault opens the Vault of the chain's kill -9 test on the
// bbolt file in dir.
func openChainCrashVault(t *testing.T, dir string, key []byte) *tokenvault.Vault {
	t.Helper()
	v, err := tokenvault.Open(context.Background(), tokenvault.Options{
		Path: filepath.Join(dir, "vault.db"), Now: time.Now, Keys: tokenvault.KeyOptions{MasterKey: key},
		Retention:  tokenvault.RetentionOptions{SweepInterval: -1},
		AuditChain: tokenvault.AuditChainOptions{LinkerLease: chainCrashLease},
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestChainCrashChild is the child process of TestChainKillNine: it
// opens a Vault on a bbolt file in the data directory (creating a tenant
// and an application on its first run), then, from four goroutines,
// creates tokens and reads each twice (reads that bbolt appends), printing
// "ack <id>" once a creation is acknowledged and "read <id>" once a read
// is, until it is killed.
func TestChainCrashChild(t *testing.T) {
	dir := os.Getenv(chainCrashDirEnv)
	if dir == "" {
		t.Skip("the child process of TestChainKillNine")
	}
	key, _ := hex.DecodeString(os.Getenv(chainCrashKeyEnv))
	ctx := context.Background()
	v := openChainCrashVault(t, dir, key)
	state := filepath.Join(dir, "tenant")
	b, err := os.ReadFile(state)
	if os.IsNotExist(err) {
		boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
			Name: "load", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(boot.Tenant.ID + " " + string(app.Key))
		if err := os.WriteFile(state+".tmp", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(state+".tmp", state); err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	_, appKey, _ := strings.Cut(string(b), " ")
	var out sync.Mutex
	say := func(s string) {
		out.Lock()
		fmt.Fprintln(os.Stdout, s)
		out.Unlock()
	}
	say("ready")
	for g := range 4 {
		go func() {
			for i := 0; ; i++ {
				tok, err := v.CreateToken(ctx, tokenvault.Credential(appKey), tokenvault.TokenRequest{Type: "token", Data: fmt.Sprintf("g%d-%d", g, i)})
				if err != nil {
					say("error " + err.Error())
					return
				}
				say("ack " + tok.ID)
				for range 2 {
					if _, err := v.GetToken(ctx, tokenvault.Credential(appKey), tok.ID); err != nil {
						say("error " + err.Error())
						return
					}
					say("read " + tok.ID)
				}
				say(fmt.Sprintf("appended %d", vaulttest.AppendedCalls(v)))
			}
		}()
	}
	select {} // until killed
}

// chainChild is a running TestChainCrashChild.
type chainChild struct {
	cmd          *exec.Cmd
	mu           sync.Mutex
	acked, reads map[string]int
	appended     int // the most calls the child said it appended
	errs         []string
	ready, done  chan struct{}
}

func startChainChild(t *testing.T, dir string, key []byte) *chainChild {
	t.Helper()
	c := &chainChild{acked: map[string]int{}, reads: map[string]int{}, ready: make(chan struct{}), done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestChainCrashChild$", "-test.v=false")
	c.cmd.Env = append(os.Environ(), chainCrashDirEnv+"="+dir, chainCrashKeyEnv+"="+hex.EncodeToString(key))
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
			word, id, _ := strings.Cut(sc.Text(), " ")
			c.mu.Lock()
			switch word {
			case "ready":
				close(c.ready)
			case "ack":
				c.acked[id]++
			case "read":
				c.reads[id]++
			case "appended":
				if n, err := strconv.Atoi(id); err == nil {
					c.appended = max(c.appended, n)
				}
			case "error":
				c.errs = append(c.errs, id)
			}
			c.mu.Unlock()
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

func (c *chainChild) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.acked)
}

// TestChainKillNine: a Vault process creating tokens and reading them
// (every line linked by the linker after its commit; reads bbolt appends,
// linked after their fold) is killed with SIGKILL, three times at
// different points of its load, so between commits and their linking;
// then the Vault is opened again, and once the dead child's linker lease
// expires its linker takes over, and the tenant's chain holds every
// acknowledged creation and read, every line of the tenant is on it once,
// the links and hashes hold, seqs run 1..n, and no line is left unchained
// or queued.
func TestChainKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process and kills it (about 10 s)")
	}
	dir, key := t.TempDir(), vaulttest.NewMasterKey()
	acked, reads := map[string]int{}, map[string]int{}
	appended := 0
	for round := 1; round <= 3; round++ {
		c := startChainChild(t, dir, key)
		for deadline := time.Now().Add(30 * time.Second); c.count() < 20*round; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d tokens acknowledged in 30 s", round, c.count())
			}
		}
		time.Sleep(time.Duration(70*round) * time.Millisecond)
		if err := c.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-c.done
		c.cmd.Wait()
		c.mu.Lock()
		if len(c.errs) > 0 {
			t.Errorf("round %d: the child's calls failed: %v", round, c.errs)
		}
		for id, n := range c.acked {
			acked[id] += n
		}
		for id, n := range c.reads {
			reads[id] += n
		}
		appended += c.appended
		t.Logf("round %d: killed after %d acknowledged creations, %d calls appended", round, len(c.acked), c.appended)
		c.mu.Unlock()
	}
	b, err := os.ReadFile(filepath.Join(dir, "tenant"))
	if err != nil {
		t.Fatal(err)
	}
	tid, _, _ := strings.Cut(string(b), " ")
	v := openChainCrashVault(t, dir, key)
	defer v.Close()
	w, err := vaulttest.WalkChain(context.Background(), v, tid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after the last kill: %d lines queued, not linked yet", w.Queued)
	// The last child held the linker lease: this Vault's linker takes it
	// once it expires (chainCrashLease).
	for deadline := time.Now().Add(60 * time.Second); w.Queued > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		if w, err = vaulttest.WalkChain(context.Background(), v, tid); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range w.Problems {
		if i == 10 {
			t.Errorf("... and %d more problems", len(w.Problems)-10)
			break
		}
		t.Error(p)
	}
	if w.FirstSeq != 1 || w.LastSeq != uint64(w.Lines) || w.Chained != w.Lines || w.Unchained != 0 || w.Queued != 0 {
		t.Errorf("chain %d..%d, %d of %d lines chained, %d unchained, %d queued", w.FirstSeq, w.LastSeq, w.Chained, w.Lines, w.Unchained, w.Queued)
	}
	for id := range acked {
		if n := w.ByEntity[id+" "+tokenvault.OpCreate]; n != 1 {
			t.Errorf("acknowledged token %s: %d creation lines on the chain", id, n)
		}
		if n := w.ByEntity[id+" "+tokenvault.OpRead]; n < reads[id] {
			t.Errorf("token %s: %d read lines on the chain, %d reads acknowledged", id, n, reads[id])
		}
	}
	if appended == 0 {
		t.Error("no read was appended: the linker across kills went untested")
	}
	t.Logf("%d acknowledged creations, %d lines on the chain 1..%d", len(acked), w.Chained, w.LastSeq)
}
