// Command crashload drives and checks the crash-safety test of the Token
// Vault server (bench/crash.sh). Standard library only.
//
// Load mode: -c workers POST /tokenize {"v": "<unique value>"} until SIGINT
// or SIGTERM (or -d), and append "<id>\t<value>\n" to the -ack file for each
// request answered 201 with a token id, and only then; each then reads the
// token back (GET /tokens/{id}) and, on a 200, appends "<id>\t<value>\tread\n":
// an acknowledged read, whose audit line must survive too. The file is
// fsynced after every group of appends and when the driver stops. Requests
// without a 201 or 200 (refused, reset, cut short by a kill) are counted,
// never acknowledged. It prints one line on stdout:
//
//	acknowledged=N reads=R unacknowledged=M transport_errors=T bad_status=S
//
// Verify mode (-verify FILE): with -log-key (a key holding log:read), first
// counts the "read" lines of GET /logs?entity_type=token&entity_id=<id> of
// every token with acknowledged reads; then GETs /tokens/{id} for every
// token of FILE with -c workers and compares the token's "data" with the
// value. It prints
//
//	acknowledged=N verified=V lost=L missing=X mismatched=Y errors=Z reads=R unlogged=U
//
// (lost = N - V: missing is a 404, mismatched a token with other data, errors
// any other answer; unlogged counts acknowledged reads without their line)
// and exits 1 when anything is lost or unlogged. The key must reveal the
// data: a private application with a "reveal" rule holding token:read.
//
//	crashload -url http://127.0.0.1:8080 -key KEY -ack acks.tsv -prefix r1
//	crashload -url http://127.0.0.1:8080 -key KEY -log-key MKEY -verify acks.tsv
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	base := flag.String("url", "", "server base URL (required)")
	key := flag.String("key", "", "application key (SVC-API-KEY): token:create, and token:read with reveal for -verify")
	workers := flag.Int("c", 16, "concurrent workers")
	ackFile := flag.String("ack", "", "load mode: file to append acknowledged <id>\\t<value> lines to")
	prefix := flag.String("prefix", "", "load mode: prefix of the values (default random)")
	duration := flag.Duration("d", 0, "load mode: stop after this long (0: at SIGINT or SIGTERM)")
	verify := flag.String("verify", "", "verify mode: check every <id>\\t<value> line of this file")
	logKey := flag.String("log-key", "", "verify mode: a key with log:read, to check that acknowledged reads were logged")
	flag.Parse()
	if *base == "" || *key == "" || *workers < 1 || (*ackFile == "") == (*verify == "") {
		fmt.Fprintln(os.Stderr, "usage: crashload -url URL -key KEY [-c N] (-ack FILE [-prefix P] [-d D] | -verify FILE)")
		os.Exit(2)
	}
	c := &client{base: strings.TrimRight(*base, "/"), key: *key, logKey: *logKey, http: &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: *workers, DisableCompression: true},
	}}
	var err error
	if *verify != "" {
		err = runVerify(c, *verify, *workers)
	} else {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if *duration > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, *duration)
			defer cancel()
		}
		if *prefix == "" {
			*prefix = randomHex(4)
		}
		err = runLoad(ctx, c, *ackFile, *prefix, *workers)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashload:", err)
		os.Exit(1)
	}
}

type client struct {
	base, key, logKey string
	http              *http.Client
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// value returns the seq-th value of a worker: unique, JSON-safe, and of
// varying length (up to about 500 bytes) so that commits touch pages of
// different shapes, overflow pages included.
func value(prefix string, worker int, seq uint64) string {
	pad := int(seq*37+uint64(worker)*101) % 480
	return fmt.Sprintf("%s-w%d-s%d-%s", prefix, worker, seq, strings.Repeat(string(rune('a'+int(seq%26))), pad))
}

// ack is one acknowledged token, or (read) one acknowledged read of it.
type ack struct {
	id, value string
	read      bool
}

func runLoad(ctx context.Context, c *client, path, prefix string, workers int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	acks := make(chan ack, 1024)
	writerDone := make(chan error, 1)
	var written atomic.Int64
	go func() { writerDone <- writeAcks(f, acks, &written) }()

	var unacked, transportErrs, badStatus, reads atomic.Int64
	var firstBad sync.Once
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for seq := uint64(0); ctx.Err() == nil; seq++ {
				v := value(prefix, w, seq)
				id, status, err := c.tokenize(ctx, v)
				switch {
				case err == nil && status == http.StatusCreated:
					acks <- ack{id: id, value: v} // recorded only after the 201 and its id
					status, err = c.read(ctx, id)
					if err == nil && status == http.StatusOK {
						acks <- ack{id: id, value: v, read: true}
						reads.Add(1)
						continue
					}
					if err == nil {
						badStatus.Add(1)
						firstBad.Do(func() { fmt.Fprintf(os.Stderr, "crashload: first unexpected status %d (read)\n", status) })
					}
					continue
				case err != nil:
					if ctx.Err() == nil {
						transportErrs.Add(1)
						time.Sleep(10 * time.Millisecond) // the server is down: don't spin
					}
				default:
					badStatus.Add(1)
					firstBad.Do(func() { fmt.Fprintf(os.Stderr, "crashload: first unexpected status %d\n", status) })
				}
				unacked.Add(1)
			}
		})
	}
	wg.Wait()
	close(acks)
	if err := <-writerDone; err != nil {
		return err
	}
	fmt.Printf("acknowledged=%d reads=%d unacknowledged=%d transport_errors=%d bad_status=%d\n",
		written.Load()-reads.Load(), reads.Load(), unacked.Load(), transportErrs.Load(), badStatus.Load())
	return nil
}

// writeAcks appends every ack it receives, fsyncing after each group of
// lines that were waiting, and closes f when acks is closed.
func writeAcks(f *os.File, acks <-chan ack, written *atomic.Int64) error {
	var buf bytes.Buffer
	var werr error
	for a := range acks {
		buf.Reset()
		n := 0
		for more := true; more; {
			if a.read {
				fmt.Fprintf(&buf, "%s\t%s\tread\n", a.id, a.value)
			} else {
				fmt.Fprintf(&buf, "%s\t%s\n", a.id, a.value)
			}
			n++
			select {
			case a, more = <-acks:
			default:
				more = false
			}
		}
		if werr != nil {
			continue // keep draining so that workers do not block
		}
		if _, err := f.Write(buf.Bytes()); err != nil {
			werr = err
			continue
		}
		if err := f.Sync(); err != nil {
			werr = err
			continue
		}
		written.Add(int64(n))
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	return werr
}

// tokenize posts {"v": value} and returns the token id of a 201. A 201
// whose body does not hold an id is an error: it is not acknowledged.
func (c *client) tokenize(ctx context.Context, value string) (id string, status int, err error) {
	body, _ := json.Marshal(map[string]string{"v": value})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/tokenize", bytes.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("SVC-API-KEY", c.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", res.StatusCode, err
	}
	if res.StatusCode != http.StatusCreated {
		return "", res.StatusCode, nil
	}
	var out struct {
		V string `json:"v"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.V == "" {
		return "", res.StatusCode, fmt.Errorf("201 without a token id: %q", b)
	}
	return out.V, res.StatusCode, nil
}

// read GETs token id once (the load's acknowledged read).
func (c *client) read(ctx context.Context, id string) (status int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/tokens/"+url.PathEscape(id), nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("SVC-API-KEY", c.key)
	res, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return res.StatusCode, err
	}
	return res.StatusCode, nil
}

func runVerify(c *client, path string, workers int) error {
	lines, err := readAcks(path)
	if err != nil {
		return err
	}
	var all []ack
	readsOf := map[string]int{}
	for _, a := range lines {
		if a.read {
			readsOf[a.id]++
		} else {
			all = append(all, a)
		}
	}
	// Before the GETs below, which log reads of their own.
	var acknowledgedReads, unlogged int
	if c.logKey != "" {
		for id, n := range readsOf {
			acknowledgedReads += n
			logged, err := c.readLines(id)
			if err != nil {
				return err
			}
			if logged < n {
				unlogged += n - logged
				fmt.Fprintf(os.Stderr, "crashload: token %s: %d acknowledged reads, %d read lines\n", id, n, logged)
			}
		}
	}
	var verified, missing, mismatched, errs atomic.Int64
	var reportMu sync.Mutex
	reported := 0
	report := func(format string, args ...any) {
		reportMu.Lock()
		defer reportMu.Unlock()
		if reported++; reported <= 10 {
			fmt.Fprintf(os.Stderr, "crashload: "+format+"\n", args...)
		}
	}
	next := make(chan ack)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for a := range next {
				data, status, err := c.getToken(a.id)
				switch {
				case err != nil:
					errs.Add(1)
					report("token %s: %v", a.id, err)
				case status == http.StatusNotFound:
					missing.Add(1)
					report("token %s: acknowledged but not found (404)", a.id)
				case status != http.StatusOK:
					errs.Add(1)
					report("token %s: status %d", a.id, status)
				case data == nil || *data != a.value:
					mismatched.Add(1)
					got := "no string"
					if data != nil {
						got = fmt.Sprintf("%q", *data)
					}
					report("token %s: data %s, want %q", a.id, got, a.value)
				default:
					verified.Add(1)
				}
			}
		})
	}
	for _, a := range all {
		next <- a
	}
	close(next)
	wg.Wait()
	lost := int64(len(all)) - verified.Load()
	fmt.Printf("acknowledged=%d verified=%d lost=%d missing=%d mismatched=%d errors=%d reads=%d unlogged=%d\n",
		len(all), verified.Load(), lost, missing.Load(), mismatched.Load(), errs.Load(), acknowledgedReads, unlogged)
	if lost != 0 {
		return fmt.Errorf("%d of %d acknowledged tokens lost", lost, len(all))
	}
	if unlogged != 0 {
		return fmt.Errorf("%d of %d acknowledged reads have no audit line", unlogged, acknowledgedReads)
	}
	return nil
}

// readLines counts the "read" lines of token id's audit log (the first
// 100 lines, newest first: far more than a run reads a token).
func (c *client) readLines(id string) (int, error) {
	q := url.Values{"entity_type": {"token"}, "entity_id": {id}, "size": {"100"}}
	req, err := http.NewRequest(http.MethodGet, c.base+"/logs?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("SVC-API-KEY", c.logKey)
	res, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /logs for token %s: status %d: %s", id, res.StatusCode, b)
	}
	var page struct {
		Data []struct {
			Operation string `json:"operation"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		return 0, fmt.Errorf("GET /logs for token %s: %w", id, err)
	}
	n := 0
	for _, l := range page.Data {
		if l.Operation == "read" {
			n++
		}
	}
	return n, nil
}

// readAcks reads the <id>\t<value> lines of path. Every line must be whole:
// the driver writes each one before it counts it.
func readAcks(path string) ([]ack, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var all []ack
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			if line != "" {
				return nil, fmt.Errorf("%s:%d: torn last line %q", path, n, line)
			}
			return all, nil
		}
		if err != nil {
			return nil, err
		}
		id, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		if !ok || id == "" {
			return nil, fmt.Errorf("%s:%d: not <id>\\t<value>: %q", path, n, line)
		}
		v, read := strings.CutSuffix(v, "\tread")
		all = append(all, ack{id: id, value: v, read: read})
	}
}

// getToken returns the data of token id when it is a string.
func (c *client) getToken(id string) (data *string, status int, err error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // transport errors only
		req, err := http.NewRequest(http.MethodGet, c.base+"/tokens/"+url.PathEscape(id), nil)
		if err != nil {
			return nil, 0, err
		}
		req.Header.Set("SVC-API-KEY", c.key)
		res, err := c.http.Do(req)
		if err != nil {
			lastErr = err
			time.Sleep(100 * time.Millisecond)
			continue
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			lastErr = err
			continue
		}
		if res.StatusCode != http.StatusOK {
			return nil, res.StatusCode, nil
		}
		var out struct {
			Data any `json:"data"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, res.StatusCode, fmt.Errorf("decoding %q: %w", b, err)
		}
		if s, ok := out.Data.(string); ok {
			return &s, res.StatusCode, nil
		}
		return nil, res.StatusCode, nil
	}
	return nil, 0, errors.Join(errors.New("no answer after 3 attempts"), lastErr)
}
