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
