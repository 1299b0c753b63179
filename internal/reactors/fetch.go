package reactors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/tokenvault/tokenvault/internal/jsrt"
	"github.com/tokenvault/tokenvault/internal/outbound"
)

// fetcher carries out the fetch calls of one invocation through the
// Vault's outbound client (Code.HTTPClient), so the outbound policy of proxies applies
// (loopback, private and link-local destinations refused unless
// Options.Outbound.AllowPrivateDestinations), bounded in number and size.
type fetcher struct {
	client *http.Client
	mu     sync.Mutex
	n      int
}

// Fetch performs one request. Its errors are shown to the code: they
// never quote the URL.
func (f *fetcher) Fetch(ctx context.Context, req *jsrt.FetchRequest) (*jsrt.FetchResponse, error) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	if n > MaxFetchesPerInvocation {
		return nil, fmt.Errorf("fetch: at most %d requests per invocation", MaxFetchesPerInvocation)
	}
	if len(req.Body) > MaxFetchRequestBytes {
		return nil, fmt.Errorf("fetch: the request body is over %d bytes", MaxFetchRequestBytes)
	}
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("fetch: the URL must be an absolute http or https URL")
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, errors.New("fetch: the request cannot be sent")
	}
	for _, h := range req.Headers {
		hr.Header.Add(h[0], h[1])
	}
	if err := CheckHeaders(hr.Header); err != nil {
		return nil, errors.New("fetch: a header cannot be sent")
	}
	res, err := f.client.Do(hr)
	if err != nil {
		var ue *url.Error
		switch {
		case errors.Is(err, outbound.ErrPrivateDestination):
			return nil, errors.New("fetch: the destination is in a private network, which this Vault refuses")
		case errors.As(err, &ue) && ue.Timeout(), ctx.Err() != nil:
			return nil, errors.New("fetch: the destination did not answer in time")
		}
		return nil, errors.New("fetch failed: the destination could not be reached")
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, MaxFetchResponseBytes+1))
	if err != nil {
		return nil, errors.New("fetch: the answer could not be read")
	}
	if len(b) > MaxFetchResponseBytes {
		return nil, fmt.Errorf("fetch: the answer is over %d bytes", MaxFetchResponseBytes)
	}
	out := &jsrt.FetchResponse{Status: res.StatusCode, StatusText: http.StatusText(res.StatusCode), URL: u.String(), Body: b}
	for name, values := range res.Header {
		for _, val := range values {
			out.Headers = append(out.Headers, [2]string{name, val})
		}
	}
	return out, nil
}
