package reactors_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// attack is tenant code written to hurt the Vault: each one ended the
// process, outlived its deadline, or took gigabytes when tenant code ran
// inside the Vault's process.
type attack struct {
	name string
	code string // a module body whose exported function runs the attack
	stop tokenvault.StopReason
	// any: the outcome may be a failure of any reason or even a result
	// (the engine may handle it); what matters is that it ends in time and
	// hurts nobody else.
	any bool
}

var attacks = []attack{
	{name: "cyclic flat", code: `const a = [1]; a.push(a); return a.flat(Infinity).length`, stop: tokenvault.CodeCrashed},
	{name: "cyclic join", code: `const a = [1]; a.push(a); return a.join(",").length`, any: true},
	{name: "walk of a huge array-like", code: `return Array.prototype.lastIndexOf.call({length: 2**53 - 1}, 1)`, stop: tokenvault.CodeTimedOut},
	{name: "concat.apply", code: `const s = "x".repeat(1 << 20); return String.prototype.concat.apply("", Array(1500).fill(s)).length`, stop: tokenvault.CodeOutOfMemory},
	{name: "JSON.stringify of a shared tree", code: `let t = {}; for (let i = 0; i < 40; i++) t = {a: t, b: t}; return JSON.stringify(t).length`, any: true},
	{name: "big typed array", code: `return new Uint8Array(2**31).fill(1).length`, stop: tokenvault.CodeOutOfMemory},
	{name: "Array.from a huge length", code: `return Array.from({length: 2**31}).length`, any: true},
	{name: "huge split", code: `return "x".repeat(60 << 20).split("").length`, stop: tokenvault.CodeOutOfMemory},
	{name: "infinite loop", code: `while (true) {}`, stop: tokenvault.CodeTimedOut},
	{name: "deep recursion", code: `const f = n => f(n + 1) + 1; return f(0)`, any: true},
	{name: "never-settling promise", code: `await new Promise(() => {}); return 1`, any: true},
	{name: "timer that never fires in time", code: `await new Promise(r => setTimeout(r, 60000)); return 1`, stop: tokenvault.CodeTimedOut},
}

// attackTimeout is the CodeTimeout of these tests; attackSlack what an
// answer may take beyond it on a busy machine (the kill comes 0.5 s after
// the deadline). The neighbour's calls run under the same timeout, so it
// leaves a trivial call room on a machine loaded to a dozen runnable
// processes per CPU, where 2 s did not.
const (
	attackTimeout = 3 * time.Second
	attackSlack   = 8 * time.Second
)

func attackOptions(o *tokenvault.Options) {
	o.Code.Timeout = attackTimeout
	o.Code.MemoryBytes = 64 << 20
	o.Code.Workers = 6
	o.Code.ConcurrencyPerTenant = 3
}

// neighbour is a second tenant with a trivial reactor, invoked in a loop
// while an attack runs: every one of its calls must succeed.
type neighbour struct {
	key     tokenvault.Credential
	reactor string
}

func newNeighbour(t *testing.T, e *vaulttest.Env) neighbour {
	t.Helper()
	boot := e.Tenant(t, "Neighbour")
	r, err := e.V.CreateReactor(ctx, boot.Application.Key, tokenvault.CreateReactorRequest{Name: "echo", Code: `module.exports = async req => ({raw: req.args})`})
	if err != nil {
		t.Fatal(err)
	}
	app, err := e.V.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "user", Type: tokenvault.Private, Permissions: []string{"token:use"}})
	if err != nil {
		t.Fatal(err)
	}
	return neighbour{key: app.Key, reactor: r.ID}
}

// keepCalling invokes the neighbour's reactor until stop is closed, and at
// least once (an attack that is answered at once, such as a promise that
// never settles, may end before the first call would have started), and
// reports every failure.
func (n neighbour) keepCalling(t *testing.T, e *vaulttest.Env, stop <-chan struct{}) (calls int) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			if i > 0 {
				return i
			}
		default:
		}
		res, err := e.V.InvokeReactor(ctx, n.key, n.reactor, tokenvault.InvokeReactorRequest{Args: map[string]any{"i": i}})
		if err != nil {
			t.Errorf("the neighbour's call %d failed during the attack: %v", i, err)
			return i
		}
		if got := res.Raw.(map[string]any)["i"]; got != float64(i) {
			t.Errorf("the neighbour's call %d = %v", i, got)
		}
	}
}

func TestHostileCodeFailsOnlyItsOwnInvocation(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), attackOptions)
	key := e.User(t)
	n := newNeighbour(t, e)
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: "module.exports = async () => { " + a.code + " }"})
			stop := make(chan struct{})
			var wg sync.WaitGroup
			calls := 0
			wg.Go(func() { calls = n.keepCalling(t, e, stop) })
			start := time.Now()
			_, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{})
			took := time.Since(start)
			close(stop)
			wg.Wait()
			if took > attackTimeout+attackSlack {
				t.Errorf("the attack was answered after %v", took)
			}
			// How a worker ends depends on which limit it reaches first: a
			// memory bomb on a loaded machine (or under the race detector,
			// which is slower and maps more) may meet its deadline before
			// its memory limit. So only the time limit's attacks must say
			// "timed out"; the others must say that the code was stopped.
			var te *tokenvault.Error
			switch {
			case a.any:
			case !vaulttest.AsError(err, &te) || te.Kind != tokenvault.CodeFailed:
				t.Errorf("InvokeReactor = %v, want CodeFailed", err)
			case a.stop == tokenvault.CodeTimedOut && te.Stop != a.stop:
				t.Errorf("Stop = %v (%v), want %v", te.Stop, err, a.stop)
			case te.Stop == tokenvault.CodeNotStopped:
				t.Errorf("InvokeReactor = %v, want the code stopped (%v)", err, a.stop)
			}
			if calls == 0 {
				t.Errorf("the neighbour made no call during the attack")
			}
		})
	}
	quietAfterwards(t)
}

// quietAfterwards checks that, a second after the attacks, the process
// tree (this process and its workers) spends no CPU on them any more and
// no worker holds their memory: only workers kept warm remain, small.
func quietAfterwards(t *testing.T) {
	t.Helper()
	time.Sleep(time.Second)
	before := treeCPU(t)
	time.Sleep(2 * time.Second)
	if used := treeCPU(t) - before; used > time.Second {
		t.Errorf("the process tree used %v of CPU in the 2 s after the attacks", used)
	}
	for _, pid := range workerPIDs(t) {
		if rss := rssBytes(pid); rss > 512<<20 {
			t.Errorf("worker %d still holds %d MiB", pid, rss>>20)
		}
	}
}

// workerPIDs lists this process's children.
func workerPIDs(t *testing.T) []int {
	t.Helper()
	self := strconv.Itoa(os.Getpid())
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		f := statFields(string(b))
		if len(f) > 1 && f[1] == self {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// statFields are the fields of /proc/<pid>/stat after the command name:
// state, ppid, ...
func statFields(stat string) []string {
	if i := strings.LastIndexByte(stat, ')'); i >= 0 {
		return strings.Fields(stat[i+1:])
	}
	return nil
}

// treeCPU is the CPU time of this process and its living children.
func treeCPU(t *testing.T) time.Duration {
	t.Helper()
	total := 0
	for _, pid := range append(workerPIDs(t), os.Getpid()) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		f := statFields(string(b))
		if len(f) > 12 {
			ut, _ := strconv.Atoi(f[11])
			st, _ := strconv.Atoi(f[12])
			total += ut + st
		}
	}
	return time.Duration(total) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

func rssBytes(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestOneTenantCannotTakeEveryWorker: a tenant whose invocations all hang
// holds at most its share of workers; another tenant's calls go on.
func TestOneTenantCannotTakeEveryWorker(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), attackOptions)
	key := e.User(t)
	n := newNeighbour(t, e)
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async () => { while (true) {} }`})
	var wg sync.WaitGroup
	busy := 0
	var mu sync.Mutex
	for range 10 {
		wg.Go(func() {
			_, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{})
			if tokenvault.ErrorKind(err) == tokenvault.Unavailable {
				mu.Lock()
				busy++
				mu.Unlock()
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	stop := make(chan struct{})
	go func() { time.Sleep(attackTimeout); close(stop) }()
	if calls := n.keepCalling(t, e, stop); calls == 0 {
		t.Error("the neighbour made no call")
	}
	wg.Wait()
	if busy == 0 {
		t.Error("10 hanging invocations of one tenant with 3 slots: none was refused")
	}
}

// TestSlowWebhooksHoldNoSlot: a tenant whose callback never answers keeps
// its webhooks pending, not its code slots; others are not refused.
func TestSlowWebhooksHoldNoSlot(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), attackOptions)
	key := e.User(t)
	n := newNeighbour(t, e)
	hang := make(chan struct{})
	defer close(hang)
	srv := newHangingServer(t, hang)
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: `module.exports = async () => ({raw: 1})`})
	// 70 webhooks pending: more than MaxAsyncInvocations, which bounds runs
	// in progress, not deliveries (a run in progress may still refuse a
	// call for a moment).
	for i := 0; i < 70; {
		_, err := e.V.InvokeReactor(ctx, key, r.ID, tokenvault.InvokeReactorRequest{CallbackURL: srv})
		switch {
		case err == nil:
			i++
		case tokenvault.ErrorKind(err) == tokenvault.Unavailable:
			time.Sleep(20 * time.Millisecond)
		default:
			t.Fatalf("async invocation %d: %v", i, err)
		}
	}
	// The neighbour's synchronous and asynchronous calls both go through.
	if _, err := e.V.InvokeReactor(ctx, n.key, n.reactor, tokenvault.InvokeReactorRequest{}); err != nil {
		t.Errorf("neighbour, sync: %v", err)
	}
	if _, err := e.V.InvokeReactor(ctx, n.key, n.reactor, tokenvault.InvokeReactorRequest{CallbackURL: srv}); err != nil {
		t.Errorf("neighbour, async: %v", err)
	}
	// And so do the tenant's own synchronous calls: pending webhooks hold
	// no code slot.
	done := make(chan error, 1)
	go func() {
		_, err := e.V.InvokeReactor(context.Background(), key, r.ID, tokenvault.InvokeReactorRequest{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("own sync call with 70 webhooks pending: %v", err)
		}
	case <-time.After(attackTimeout + attackSlack):
		t.Error("own sync call with 70 webhooks pending did not return")
	}
}

// newHangingServer is a webhook receiver that answers nothing until hang
// is closed; it returns its URL.
func newHangingServer(t *testing.T, hang <-chan struct{}) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
