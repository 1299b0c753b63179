package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// apiKeyHeader carries the application key (httpapi.APIKeyHeader).
const apiKeyHeader = "SVC-API-KEY"

// workload builds the requests of one mode. newRequest is called
// concurrently by every worker.
type workload struct {
	name       string
	expect     int // the status a successful response has
	perRequest int // tokens created per request (batch), 0 otherwise
	newRequest func(ctx context.Context) (*http.Request, error)
}

// newWorkload returns the workload of cfg.mode. The get mode first creates
// cfg.prefill tokens with client.
func newWorkload(ctx context.Context, cfg config, client *http.Client) (*workload, error) {
	base := strings.TrimRight(cfg.url, "/")
	v := &values{run: runID(), runDigits: runDigits()}
	switch cfg.mode {
	case "tokenize":
		return &workload{name: cfg.mode, expect: http.StatusCreated,
			newRequest: func(ctx context.Context) (*http.Request, error) {
				return post(ctx, base+"/tokenize", cfg.key, v.single())
			}}, nil
	case "card":
		return &workload{name: cfg.mode, expect: http.StatusCreated,
			newRequest: func(ctx context.Context) (*http.Request, error) {
				return post(ctx, base+"/tokenize", cfg.key, v.card())
			}}, nil
	case "batch":
		return &workload{name: cfg.mode, expect: http.StatusCreated, perRequest: cfg.batch,
			newRequest: func(ctx context.Context) (*http.Request, error) {
				return post(ctx, base+"/tokenize", cfg.key, v.batch(cfg.batch))
			}}, nil
	case "get":
		ids, err := prefill(ctx, client, base, cfg.key, v, cfg.prefill)
		if err != nil {
			return nil, err
		}
		urls := make([]string, len(ids))
		for i, id := range ids {
			urls[i] = base + "/tokens/" + url.PathEscape(id)
		}
		var next atomic.Uint64 // round robin over the tokens
		return &workload{name: cfg.mode, expect: http.StatusOK,
			newRequest: func(ctx context.Context) (*http.Request, error) {
				return get(ctx, urls[(next.Add(1)-1)%uint64(len(urls))], cfg.key)
			}}, nil
	case "empty":
		path := cfg.path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		return &workload{name: cfg.mode, expect: http.StatusOK,
			newRequest: func(ctx context.Context) (*http.Request, error) {
				return get(ctx, base+path, cfg.key)
			}}, nil
	}
	return nil, fmt.Errorf("unknown mode %q", cfg.mode)
}

// values hands out plain values that are unique across workers, warm-up and
// measured phases, and runs (run is random).
type values struct {
	run       string
	runDigits []byte // 5 random digits, for card numbers
	seq       atomic.Uint64
}

// next returns a fresh unique value, safe for a JSON string as is.
func (v *values) next() string {
	return v.run + "-" + strconv.FormatUint(v.seq.Add(1), 10)
}

// single is the body {"v": "<unique value>"}.
func (v *values) single() []byte {
	return []byte(`{"v":"` + v.next() + `"}`)
}

// card is a single card token request, {"type": "card", "data": {...}},
// whose number is unique (the run's random digits and a counter) and passes
// the Luhn check, expiring at the end of next year.
func (v *values) card() []byte {
	n := v.seq.Add(1)
	digits := make([]byte, 0, 16)
	digits = append(digits, '4')            // a Visa
	digits = append(digits, v.runDigits...) // 5 digits
	digits = fmt.Appendf(digits, "%09d", n%1_000_000_000)
	digits = append(digits, luhnDigit(digits))
	return fmt.Appendf(nil, `{"type":"card","data":{"number":"%s","expiration_month":12,"expiration_year":%d,"cvc":"123"}}`,
		digits, time.Now().Year()+1)
}

// luhnDigit is the check digit that makes digits followed by it pass the
// Luhn check.
func luhnDigit(digits []byte) byte {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-i)%2 == 1 { // doubled: every second digit from the check digit
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// batch is the body {"v0": "...", "v1": "...", ...} with n unique values.
func (v *values) batch(n int) []byte {
	prefix := v.next()
	b := make([]byte, 0, n*(2*len(prefix)+16)+2)
	b = append(b, '{')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `"v`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `":"`...)
		b = append(b, prefix...)
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '"')
	}
	return append(b, '}')
}

// runDigits are 5 random decimal digits that keep card numbers of
// separate runs apart.
func runDigits() []byte {
	var b [5]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return b[:]
}

// runID is a random prefix that keeps values of separate runs apart.
func runID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "lg" + hex.EncodeToString(b)
}

func post(ctx context.Context, u, key string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	setKey(req, key)
	return req, nil
}

func get(ctx context.Context, u, key string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	setKey(req, key)
	return req, nil
}

func setKey(req *http.Request, key string) {
	if key != "" {
		req.Header.Set(apiKeyHeader, key)
	}
}

// prefill creates n tokens, one POST /tokenize each, and returns their ids.
func prefill(ctx context.Context, client *http.Client, base, key string, v *values, n int) ([]string, error) {
	if n < 1 {
		return nil, fmt.Errorf("-prefill must be at least 1")
	}
	ids := make([]string, 0, n)
	for range n {
		req, err := post(ctx, base+"/tokenize", key, v.single())
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
		if resp.StatusCode != http.StatusCreated {
			return nil, fmt.Errorf("prefill: POST /tokenize: status %d: %s", resp.StatusCode, snippet(body))
		}
		var out struct {
			V string `json:"v"`
		}
		if err := json.Unmarshal(body, &out); err != nil || out.V == "" {
			return nil, fmt.Errorf("prefill: POST /tokenize: no token id in %s", snippet(body))
		}
		ids = append(ids, out.V)
	}
	return ids, nil
}

// snippet is the start of a response body, for error messages.
func snippet(body []byte) string {
	const limit = 300
	s := strings.TrimSpace(string(body))
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}
