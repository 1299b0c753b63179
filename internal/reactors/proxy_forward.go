package reactors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/tokenvault/tokenvault/internal/outbound"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// ProxyResponse is the destination's answer, after the response transform.
type ProxyResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// Forward makes a proxy's outbound call (method to target, with header
// and body) through client, and reads the answer, at most maxResponse
// bytes of it. The answer's hop-by-hop headers are left out
// (ResponseHeaders).
//
// Returns Invalid for a request that cannot be built, BadGateway when the
// destination cannot be reached (a private one refused by the client's
// outbound policy, one that did not answer in time) or answers more than
// maxResponse bytes. No error quotes the target, which may hold a
// credential the caller must not see.
func Forward(ctx context.Context, client *http.Client, maxResponse int64, method, target string, header http.Header, body []byte) (*ProxyResponse, error) {
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		// Never the error's text: it quotes the destination URL, which
		// may hold a credential the caller must not see.
		return nil, unit.Errorf(unit.Invalid, "the request cannot be forwarded")
	}
	req.Header = header
	res, err := client.Do(req)
	if err != nil {
		msg := "the destination could not be reached"
		var ue *url.Error
		switch {
		case errors.Is(err, outbound.ErrPrivateDestination):
			msg = "the destination is in a private network, which this Vault refuses"
		case errors.As(err, &ue) && ue.Timeout():
			msg = "the destination did not answer in time"
		}
		return nil, &unit.Error{Kind: unit.BadGateway, Message: msg}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxResponse+1))
	if err != nil {
		return nil, &unit.Error{Kind: unit.BadGateway, Message: "the destination's answer could not be read"}
	}
	if int64(len(b)) > maxResponse {
		return nil, &unit.Error{Kind: unit.BadGateway, Message: fmt.Sprintf("the destination answered more than %d bytes", maxResponse)}
	}
	return &ProxyResponse{Status: res.StatusCode, Header: ResponseHeaders(res.Header), Body: b}, nil
}
