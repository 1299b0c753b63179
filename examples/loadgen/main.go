// Command loadgen is a small HTTP load generator for Token Vault.
//
//	go run ./examples/loadgen -url http://127.0.0.1:8080 -key $KEY -mode tokenize -c 16 -d 10s
//
// Modes:
//
//	tokenize  POST /tokenize {"v": "<unique value>"}, expects 201
//	card      POST /tokenize {"type": "card", "data": {...}} with a unique,
//	          Luhn-valid number, expects 201
//	batch     POST /tokenize with -batch unique values {"v0": "...", ...}, expects 201;
//	          also reports tokens/s
//	get       creates -prefill tokens first, then GET /tokens/{id} round robin, expects 200
//	empty     GET -path (default /health), expects 200: the net/http floor
//
// -c workers share one http.Client whose Transport keeps c idle connections
// per host. The run lasts -d, or -n requests in total when -n is set, after
// a -warmup that is not counted. A 429 (Too Many Requests: the server's rate
// limits) is a refusal; any other status, or a transport error, is an error.
// They are counted apart, because a refusal says the load met a limit the
// server was configured with, not that the server failed; the first of each
// is printed to stderr. The result is one line on stdout, or a JSON object
// with -json (durations in nanoseconds):
//
//	mode=tokenize c=16 requests=24890 errors=0 refused=0 duration=10s req/s=2489.0 p50=6.1ms p90=9.02ms p99=15.1ms max=40.2ms
//
// req/s counts every completed request, errors and refusals included (a
// refusal is cheap: a run with refusals measures the limit, not the
// server); tokens/s counts successful requests only. The percentiles are
// exact, over every completed request of the measured phase.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// config is what the flags decide.
type config struct {
	url     string
	key     string
	mode    string
	path    string // empty mode
	batch   int    // batch mode
	prefill int    // get mode
	c       int
	d       time.Duration
	n       int64
	warmup  time.Duration
	json    bool
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	c := config{key: getenv("TOKENVAULT_KEY")}
	fl := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.StringVar(&c.url, "url", "http://127.0.0.1:8080", "base URL of the server")
	fl.StringVar(&c.key, "key", c.key, "SVC-API-KEY value (env TOKENVAULT_KEY)")
	fl.StringVar(&c.mode, "mode", "tokenize", "tokenize, card, batch, get or empty")
	fl.StringVar(&c.path, "path", "/health", "path to GET in empty mode")
	fl.IntVar(&c.batch, "batch", 1000, "values per request in batch mode")
	fl.IntVar(&c.prefill, "prefill", 100, "tokens to create before get mode")
	fl.IntVar(&c.c, "c", 16, "concurrent workers")
	fl.DurationVar(&c.d, "d", 10*time.Second, "duration of the measured run")
	fl.Int64Var(&c.n, "n", 0, "total requests of the measured run (overrides -d)")
	fl.DurationVar(&c.warmup, "warmup", time.Second, "warm-up before the measured run, not counted")
	fl.BoolVar(&c.json, "json", false, "print the result as a JSON object")
	if err := fl.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fl.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q", fl.Args())
	case c.mode != "tokenize" && c.mode != "card" && c.mode != "batch" && c.mode != "get" && c.mode != "empty":
		return c, fmt.Errorf("-mode must be tokenize, card, batch, get or empty, not %q", c.mode)
	case c.url == "":
		return c, errors.New("-url is required")
	case c.c < 1:
		return c, errors.New("-c must be at least 1")
	case c.n < 0:
		return c, errors.New("-n must not be negative")
	case c.n == 0 && c.d <= 0:
		return c, errors.New("-d must be positive (or set -n)")
	case c.warmup < 0:
		return c, errors.New("-warmup must not be negative")
	case c.mode == "batch" && c.batch < 1:
		return c, errors.New("-batch must be at least 1")
	case c.mode == "get" && c.prefill < 1:
		return c, errors.New("-prefill must be at least 1")
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	res, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	if cfg.json {
		json.NewEncoder(os.Stdout).Encode(res)
	} else {
		fmt.Println(res.line())
	}
}

// result is the outcome of one run.
type result struct {
	Mode         string        `json:"mode"`
	Concurrency  int           `json:"concurrency"`
	Requests     int64         `json:"requests"`
	Errors       int64         `json:"errors"`  // other statuses than the expected one and 429, transport errors
	Refused      int64         `json:"refused"` // 429: refused by the server's rate limits
	Duration     time.Duration `json:"duration_ns"`
	ReqPerSec    float64       `json:"req_per_s"`
	TokensPerSec float64       `json:"tokens_per_s,omitempty"` // batch: successful requests × batch size
	P50          time.Duration `json:"p50_ns"`
	P90          time.Duration `json:"p90_ns"`
	P99          time.Duration `json:"p99_ns"`
	Max          time.Duration `json:"max_ns"`
}

// line is the one-line, key=value form of r.
func (r result) line() string {
	s := fmt.Sprintf("mode=%s c=%d requests=%d errors=%d refused=%d duration=%v req/s=%.1f p50=%v p90=%v p99=%v max=%v",
		r.Mode, r.Concurrency, r.Requests, r.Errors, r.Refused, short(r.Duration), r.ReqPerSec,
		short(r.P50), short(r.P90), short(r.P99), short(r.Max))
	if r.TokensPerSec > 0 {
		s += fmt.Sprintf(" tokens/s=%.1f", r.TokensPerSec)
	}
	return s
}

// short rounds d to three significant digits, for printing.
func short(d time.Duration) time.Duration {
	unit := time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit)
}

// run prepares the workload, warms up, and measures.
func run(ctx context.Context, cfg config, stderr io.Writer) (result, error) {
	client := newClient(cfg.c)
	defer client.CloseIdleConnections()
	w, err := newWorkload(ctx, cfg, client)
	if err != nil {
		return result{}, err
	}
	if cfg.warmup > 0 {
		drive(ctx, client, w, cfg.c, time.Now().Add(cfg.warmup), 0)
	}
	if err := ctx.Err(); err != nil {
		return result{}, err
	}
	start := time.Now()
	until := start.Add(cfg.d)
	p := drive(ctx, client, w, cfg.c, until, cfg.n)
	elapsed := time.Since(start)
	if p.firstErr != "" {
		fmt.Fprintf(stderr, "loadgen: %s: %d errors; the first: %s\n", w.name, p.errors, p.firstErr)
	}
	if p.firstRefusal != "" {
		fmt.Fprintf(stderr, "loadgen: %s: %d refused by the server's rate limits (429); the first: %s\n", w.name, p.refused, p.firstRefusal)
	}
	all := merge(p.latencies)
	lat := summarize(all)
	res := result{
		Mode: w.name, Concurrency: cfg.c, Requests: int64(len(all)), Errors: p.errors, Refused: p.refused,
		Duration: elapsed, P50: lat.P50, P90: lat.P90, P99: lat.P99, Max: lat.Max,
	}
	if secs := elapsed.Seconds(); secs > 0 {
		res.ReqPerSec = float64(res.Requests) / secs
		res.TokensPerSec = float64((res.Requests-res.Errors-res.Refused)*int64(w.perRequest)) / secs
	}
	return res, ctx.Err()
}

// newClient returns a client whose Transport keeps a connection per worker.
func newClient(workers int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // measure the server, not a proxy from the environment
	tr.MaxIdleConns = max(100, workers)
	tr.MaxIdleConnsPerHost = workers
	tr.MaxConnsPerHost = 0
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// phase is what the workers of one phase recorded.
type phase struct {
	latencies    [][]time.Duration // per worker, every completed request
	errors       int64
	firstErr     string
	refused      int64 // 429s
	firstRefusal string
}

// drive runs workers until the deadline until, or until n requests have
// been issued when n > 0, or until ctx is done. Requests interrupted by ctx
// are not counted.
func drive(ctx context.Context, client *http.Client, w *workload, workers int, until time.Time, n int64) phase {
	p := phase{latencies: make([][]time.Duration, workers)}
	var issued, errs, refused atomic.Int64
	var first, firstRefusal atomic.Pointer[string]
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 1024)
			for ctx.Err() == nil {
				if n > 0 {
					if issued.Add(1) > n {
						break
					}
				} else if !time.Now().Before(until) {
					break
				}
				t0 := time.Now()
				out, msg := do(ctx, client, w)
				d := time.Since(t0)
				if ctx.Err() != nil {
					break
				}
				lat = append(lat, d)
				switch out {
				case failed:
					errs.Add(1)
					first.CompareAndSwap(nil, &msg)
				case refusedByLimit:
					refused.Add(1)
					firstRefusal.CompareAndSwap(nil, &msg)
				}
			}
			p.latencies[i] = lat
		})
	}
	wg.Wait()
	p.errors = errs.Load()
	if f := first.Load(); f != nil {
		p.firstErr = *f
	}
	p.refused = refused.Load()
	if f := firstRefusal.Load(); f != nil {
		p.firstRefusal = *f
	}
	return p
}

// outcome is how one request ended.
type outcome int

const (
	succeeded      outcome = iota // the workload's expected status
	refusedByLimit                // 429 Too Many Requests
	failed                        // another status, or a transport error
)

// do sends one request and reads the whole response. It returns how it
// ended and, unless it succeeded, what happened.
func do(ctx context.Context, client *http.Client, w *workload) (outcome, string) {
	req, err := w.newRequest(ctx)
	if err != nil {
		return failed, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return failed, err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != w.expect {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		io.Copy(io.Discard, resp.Body)
		msg := fmt.Sprintf("%s %s: status %d, want %d: %s", req.Method, req.URL.Path, resp.StatusCode, w.expect, snippet(body))
		if resp.StatusCode == http.StatusTooManyRequests {
			return refusedByLimit, msg
		}
		return failed, msg
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return failed, fmt.Sprintf("%s %s: reading the response: %v", req.Method, req.URL.Path, err)
	}
	return succeeded, ""
}
