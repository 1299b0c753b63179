package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// crashKills is the number of kill -9 rounds of TestCrashSafety.
const crashKills = 5

// TestCrashSafety kills the server (a subprocess, SIGKILL) in the middle of
// concurrent tokenize requests, crashKills times, restarts it on the same
// data directory each time, and checks that the bbolt file is consistent
// and every token acknowledged with a 201 is readable with its exact value.
// The load reads each token it created back; every read answered 200 must
// have its audit line after the restart (reads append their lines to the
// store's append log, which a restart replays). bench/crash.sh does the
// same from the shell.
func TestCrashSafety(t *testing.T) {
	if os.Getenv("TOKENVAULT_CRASH_TEST") != "1" {
		t.Skip("kills a server subprocess 5 times (about 20 s); run it with TOKENVAULT_CRASH_TEST=1 go test -run TestCrashSafety ./internal/cli")
	}
	t.Parallel()
	dir := t.TempDir()
	began := time.Now()
	bin := buildServer(t)
	data := filepath.Join(dir, "data")

	srv := startProcess(t, bin, data)
	mgmt := readManagementKey(t, data)
	key := createRevealApp(t, srv.addr, mgmt)

	var all []acked
	totalLost, totalReads, totalUnlogged := 0, 0, 0
	for round := 1; round <= crashKills; round++ {
		load := startLoad(srv.addr, key, 16)
		loadBegan := time.Now()
		// Mid-load: at least a few acknowledgements, then a random 0.5-1.5 s.
		deadline := time.Now().Add(10 * time.Second)
		for load.count() < 10 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(500*time.Millisecond + rand.N(time.Second))
		srv.kill(t)
		loaded := time.Since(loadBegan)
		res := load.stop()
		if len(res.bad) > 0 {
			t.Errorf("round %d: unexpected answers before the kill: %q", round, res.bad)
		}

		checkBolt(t, filepath.Join(data, "vault.db"))
		restart := time.Now()
		srv = startProcess(t, bin, data)
		restarted := time.Since(restart)
		// Before verifyAcked, whose reads log lines of their own.
		reads, unlogged := verifyReadLines(t, srv.addr, mgmt, res.reads)
		lost := verifyAcked(t, srv.addr, key, res.acked)
		t.Logf("round %d: killed after %v of load: acknowledged %d, lost %d; reads %d, unlogged %d (unacknowledged %d; restart %v)",
			round, loaded.Round(time.Millisecond), len(res.acked), lost, reads, unlogged, res.unacked, restarted.Round(time.Millisecond))
		if len(res.acked) == 0 {
			t.Errorf("round %d: no request was acknowledged before the kill", round)
		}
		all = append(all, res.acked...)
		totalLost += lost
		totalReads += reads
		totalUnlogged += unlogged
	}
	lost := verifyAcked(t, srv.addr, key, all)
	t.Logf("total: %d kills, acknowledged %d, lost %d (all rounds again after the last restart: lost %d); %v",
		crashKills, len(all), totalLost, lost, time.Since(began).Round(time.Millisecond))
	if totalLost != 0 || lost != 0 {
		t.Errorf("acknowledged tokens were lost")
	}
	if totalReads == 0 || totalUnlogged != 0 {
		t.Errorf("%d of %d acknowledged reads have no audit line", totalUnlogged, totalReads)
	}
	srv.terminate(t)
	checkBolt(t, filepath.Join(data, "vault.db"))
}

// serverProcess is the server binary running as a subprocess.
type serverProcess struct {
	cmd  *exec.Cmd
	addr string
	out  *syncBuffer
	done chan error // cmd.Wait's result
}

var listeningRE = regexp.MustCompile(`msg=listening addr=http://(\S+)`)

// startProcess starts bin on data and a random loopback port and waits for
// it to listen. The test fails if it exits first, which is what a data file
// that does not open cleanly makes it do. It is killed at the end of the
// test if still running. extra are more flags.
func startProcess(t *testing.T, bin, data string, extra ...string) *serverProcess {
	t.Helper()
	p := &serverProcess{out: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-data", data}, extra...)...)
	for _, e := range os.Environ() { // none of the test's TOKENVAULT_* settings
		if !strings.HasPrefix(e, "TOKENVAULT_") {
			p.cmd.Env = append(p.cmd.Env, e)
		}
	}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		p.done <- nil // for another cleanup, never waited on
	})
	deadline := time.After(30 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(p.out.String()); m != nil {
			p.addr = m[1]
			return p
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("the server exited at start: %v\n%s", err, p.out)
		case <-deadline:
			t.Fatalf("the server did not listen in 30 s:\n%s", p.out)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *serverProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-p.done
	p.done <- err
}

// terminate sends SIGTERM and expects a clean exit within 30 s.
func (p *serverProcess) terminate(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Errorf("the server exited with %v on SIGTERM:\n%s", err, p.out)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the server did not exit in 30 s after SIGTERM")
	}
}

// checkBolt opens the bbolt file read-only and runs bbolt's consistency
// check (every page reachable once, no page both free and in use).
func checkBolt(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("bbolt open %s: %v", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bbolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatalf("bbolt check %s: %v", path, err)
	}
}

func readManagementKey(t *testing.T, data string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "management.key"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// createRevealApp creates a private application that may tokenize and read
// tokens with their data revealed, and returns its key.
func createRevealApp(t *testing.T, addr, managementKey string) string {
	t.Helper()
	body := `{"name":"crash","type":"private","rules":[{"priority":1,"container":"/","transform":"reveal","permissions":["token:create","token:read"]}]}`
	req, _ := http.NewRequest("POST", "http://"+addr+"/applications", strings.NewReader(body))
	req.Header.Set("SVC-API-KEY", managementKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var app struct {
		Key string `json:"key"`
	}
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &app); res.StatusCode != http.StatusCreated || err != nil || app.Key == "" {
		t.Fatalf("POST /applications = %d %s", res.StatusCode, b)
	}
	return app.Key
}

// acked is a token the server acknowledged with a 201.
type acked struct{ id, value string }

// tokenize posts {"v": value}. It returns the id of a 201 with a token id;
// err is a transport error before any answer (refused, reset), or readErr
// an answer cut short or a 201 without an id.
func tokenize(c *http.Client, addr, key string, body io.Reader, contentLength int64) (id string, status int, answer string, err, readErr error) {
	req, err := http.NewRequest("POST", "http://"+addr+"/tokenize", body)
	if err != nil {
		return "", 0, "", err, nil
	}
	req.ContentLength = contentLength
	req.Header.Set("SVC-API-KEY", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return "", 0, "", err, nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", res.StatusCode, string(b), nil, fmt.Errorf("reading the answer: %w", err)
	}
	if res.StatusCode != http.StatusCreated {
		return "", res.StatusCode, string(b), nil, nil
	}
	var out struct {
		V string `json:"v"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.V == "" {
		return "", res.StatusCode, string(b), nil, fmt.Errorf("a 201 without a token id: %q", b)
	}
	return out.V, res.StatusCode, string(b), nil, nil
}

func tokenizeBody(value string) []byte {
	b, _ := json.Marshal(map[string]string{"v": value})
	return b
}

// load is workers posting unique values to /tokenize until stopped.
type load struct {
	stopping atomic.Bool
	wg       sync.WaitGroup
	acks     atomic.Int64

	mu  sync.Mutex
	res loadResult
}

type loadResult struct {
	acked []acked
	// reads counts the reads of each token answered 200.
	reads   map[string]int
	unacked int      // transport errors: refused, reset, cut short
	bad     []string // answers other than a whole 201 with an id
}

var loadRun atomic.Int64 // makes values unique across loads of one test binary

func startLoad(addr, key string, workers int) *load {
	l := &load{res: loadResult{reads: map[string]int{}}}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	run := loadRun.Add(1)
	for w := range workers {
		l.wg.Go(func() {
			for seq := 0; !l.stopping.Load(); seq++ {
				v := fmt.Sprintf("load%d-w%d-s%d-%s", run, w, seq, strings.Repeat("x", (seq*37+w*101)%480))
				body := tokenizeBody(v)
				id, status, answer, err, readErr := tokenize(c, addr, key, bytes.NewReader(body), int64(len(body)))
				l.mu.Lock()
				switch {
				case err != nil:
					l.res.unacked++
				case readErr != nil:
					l.res.bad = append(l.res.bad, fmt.Sprintf("%d: %v", status, readErr))
				case status != http.StatusCreated:
					l.res.bad = append(l.res.bad, fmt.Sprintf("%d %s", status, answer))
				default:
					l.res.acked = append(l.res.acked, acked{id, v})
					l.acks.Add(1)
				}
				l.mu.Unlock()
				if err == nil && readErr == nil && status == http.StatusCreated && readOnce(c, addr, key, id) {
					l.mu.Lock()
					l.res.reads[id]++
					l.mu.Unlock()
				}
				if err != nil {
					time.Sleep(5 * time.Millisecond) // the server is gone: don't spin
				}
			}
		})
	}
	return l
}

func (l *load) count() int64 { return l.acks.Load() }

// stop stops the workers once their requests in progress are answered or
// fail, and returns what they saw.
func (l *load) stop() loadResult {
	l.stopping.Store(true)
	l.wg.Wait()
	return l.res
}

// verifyAcked reads every acknowledged token with 16 workers and returns
// how many are missing or hold another value, reporting the first few.
func verifyAcked(t *testing.T, addr, key string, all []acked) (lost int) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var mu sync.Mutex
	next := make(chan acked)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for a := range next {
				problem := readBack(c, addr, key, a)
				if problem == "" {
					continue
				}
				mu.Lock()
				if lost++; lost <= 10 {
					t.Errorf("token %s: %s", a.id, problem)
				}
				mu.Unlock()
			}
		})
	}
	for _, a := range all {
		next <- a
	}
	close(next)
	wg.Wait()
	return lost
}

// readOnce reports whether GET /tokens/{id} answered 200: the server
// answers only once the read's audit line is durable.
func readOnce(c *http.Client, addr, key, id string) bool {
	req, _ := http.NewRequest("GET", "http://"+addr+"/tokens/"+url.PathEscape(id), nil)
	req.Header.Set("SVC-API-KEY", key)
	res, err := c.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	return err == nil && res.StatusCode == http.StatusOK
}

// verifyReadLines checks, with a key holding log:read, that every token
// has at least as many "read" lines as reads answered 200, and returns
// the reads and how many have no line.
func verifyReadLines(t *testing.T, addr, logKey string, reads map[string]int) (total, unlogged int) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	for id, n := range reads {
		total += n
		q := url.Values{"entity_type": {"token"}, "entity_id": {id}, "size": {"100"}}
		req, _ := http.NewRequest("GET", "http://"+addr+"/logs?"+q.Encode(), nil)
		req.Header.Set("SVC-API-KEY", logKey)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET /logs for token %s = %d %s (%v)", id, res.StatusCode, b, err)
		}
		var page struct {
			Data []struct {
				Operation string `json:"operation"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		logged := 0
		for _, l := range page.Data {
			if l.Operation == "read" {
				logged++
			}
		}
		if logged < n {
			if unlogged == 0 {
				t.Errorf("token %s: %d reads answered 200, %d read lines", id, n, logged)
			}
			unlogged += n - logged
		}
	}
	return total, unlogged
}

// readBack returns "" when GET /tokens/{id} answers 200 with the value as
// data, and what went wrong otherwise.
func readBack(c *http.Client, addr, key string, a acked) string {
	req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://"+addr+"/tokens/"+url.PathEscape(a.id), nil)
	req.Header.Set("SVC-API-KEY", key)
	res, err := c.Do(req)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err.Error()
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Sprintf("acknowledged, but GET answers %d %s", res.StatusCode, b)
	}
	var tok struct {
		Data any `json:"data"`
	}
	if err := json.Unmarshal(b, &tok); err != nil {
		return fmt.Sprintf("decoding %s: %v", b, err)
	}
	if tok.Data != a.value {
		return fmt.Sprintf("data %v, want %q", tok.Data, a.value)
	}
	return ""
}

// TestSecondSignalStopsAtOnce: SIGTERM starts a graceful shutdown that
// waits for a request in flight; a second SIGTERM ends the process at
// once instead of after the 30 s grace period.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	if os.Getenv("TOKENVAULT_CRASH_TEST") != "1" {
		t.Skip("builds and signals a server subprocess; run it with TOKENVAULT_CRASH_TEST=1")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := buildServer(t)
	srv := startProcess(t, bin, filepath.Join(dir, "data"))
	key := readManagementKey(t, filepath.Join(dir, "data"))

	// A request in flight that never finishes: the server's "100 Continue"
	// says its handler is reading the body, of which half is sent.
	conn, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /tokenize HTTP/1.1\r\nHost: %s\r\nSVC-API-KEY: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", srv.addr, key)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("want 100 Continue, got %q, %v", line, err)
	}
	if _, err := conn.Write([]byte(`{"a": "`)); err != nil {
		t.Fatal(err)
	}

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(srv.out.String(), "shutting down") {
		if time.Now().After(deadline) {
			t.Fatalf("no graceful shutdown began after SIGTERM:\n%s", srv.out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-srv.done:
		srv.done <- err
		t.Fatalf("the server exited before the request in flight ended: %v", err)
	case <-time.After(500 * time.Millisecond): // still waiting for it, as it should
	}

	second := time.Now()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-srv.done:
		srv.done <- err
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("exit: %v, want the end by a signal", err)
		}
		if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Errorf("exit status %v, want killed by SIGTERM", exit)
		}
		t.Logf("exited %v after the second SIGTERM", time.Since(second).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("the server was still running 5 s after a second SIGTERM")
	}
}

// serverBinary is the tokenvault command (cmd/tokenvault), built once for
// the test process: the crash tests run in parallel, and each building it
// was as many go builds of one program at once (on a fresh clone, each
// compiling every package). TestMain removes its directory.
var serverBinary struct {
	once sync.Once
	dir  string
	path string
	took time.Duration
	err  error
}

// buildServer returns the path of the tokenvault command, built on the
// first call.
func buildServer(t *testing.T) string {
	t.Helper()
	s := &serverBinary
	s.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			s.err = fmt.Errorf("the go command is needed to build the server: %v", err)
			return
		}
		if s.dir, err = os.MkdirTemp("", "tokenvault-cli-test-"); err != nil {
			s.err = err
			return
		}
		s.path = filepath.Join(s.dir, "server")
		began := time.Now()
		if out, err := exec.Command(goTool, "build", "-o", s.path, "../../cmd/tokenvault").CombinedOutput(); err != nil {
			s.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		s.took = time.Since(began)
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Logf("the server, built once for the package's tests in %v", s.took.Round(time.Millisecond))
	return s.path
}
