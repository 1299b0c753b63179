package jsrt_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsrt"
)

func Example() {
	rt := jsrt.New(jsrt.Options{Timeout: time.Second})
	prog, err := rt.Compile(`
		const { createHash } = require('crypto');
		module.exports = async function (req) {
			if (!req.args.card) throw new BadRequestError({card: ['is required']});
			return { raw: { fingerprint: createHash('sha256').update(req.args.card).digest('hex').slice(0, 8) } };
		};`)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := rt.Run(context.Background(), prog, map[string]any{"args": map[string]any{"card": "4242424242424242"}}, jsrt.Host{})
	fmt.Println(out, err)

	_, err = rt.Run(context.Background(), prog, map[string]any{"args": map[string]any{}}, jsrt.Host{})
	var je *jsrt.Error
	if errors.As(err, &je) {
		fmt.Println(je.Kind, je.Status, je.Class, je.Errors)
	}
	// Output:
	// map[raw:map[fingerprint:477bba13]] <nil>
	// thrown 400 BadRequestError map[card:[is required]]
}

func ExampleRuntime_Compile() {
	rt := jsrt.New(jsrt.Options{})
	_, err := rt.Compile("module.exports = function (req) {\n  return req.args.;\n}")
	fmt.Println(err)
	_, err = rt.Compile("module.exports = { handler() {} }")
	var ce *jsrt.CompileError
	fmt.Println(errors.As(err, &ce) && ce.NotAFunction)
	// Output:
	// line 2, column 19: Unexpected token ;
	// true
}

// tokenService stands for the host's Fetcher, which would apply its
// policy and make the request.
type tokenService struct{}

func (tokenService) Fetch(ctx context.Context, req *jsrt.FetchRequest) (*jsrt.FetchResponse, error) {
	fmt.Println(req.Method, req.URL, req.Headers, string(req.Body))
	return &jsrt.FetchResponse{
		Status:  201,
		Headers: [][2]string{{"Content-Type", "application/json"}},
		Body:    []byte(`{"id":"tok_1"}`),
	}, nil
}

func ExampleRuntime_Run_fetch() {
	rt := jsrt.New(jsrt.Options{Timeout: time.Second})
	prog, err := rt.Compile(`
		module.exports = async function (req) {
			const res = await fetch('https://tokens.example/v1/tokens', {
				method: 'post',
				headers: { Authorization: 'Bearer ' + req.args.key },
				body: { card: req.args.card },
			});
			return { status: res.status, ok: res.ok, type: res.headers.get('content-type'), body: await res.json() };
		};`)
	if err != nil {
		fmt.Println(err)
		return
	}
	req := map[string]any{"args": map[string]any{"card": "4242424242424242", "key": "k1"}}
	out, err := rt.Run(context.Background(), prog, req, jsrt.Host{Fetch: tokenService{}})
	fmt.Println(out, err)
	// Output:
	// POST https://tokens.example/v1/tokens [[Authorization Bearer k1] [Content-Type application/json]] {"card":"4242424242424242"}
	// map[body:map[id:tok_1] ok:true status:201 type:application/json] <nil>
}
