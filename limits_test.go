package tokenvault_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// nested returns a JSON document n levels deep.
func nested(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, n-1) + `["x"]` + strings.Repeat("}", n-1))
}

func TestJSONDepthLimit(t *testing.T) {
	e := newEnv(t)
	creator := e.reader(t, "reveal", "token:create", "token:read", "token:update", "token:use")
	if _, err := e.v.Tokenize(ctx, creator.Key, nested(tokenvault.MaxJSONDepth)); err != nil {
		t.Fatalf("a body %d levels deep: %v", tokenvault.MaxJSONDepth, err)
	}
	deep := nested(tokenvault.MaxJSONDepth + 1)
	_, err := e.v.Tokenize(ctx, creator.Key, deep)
	wantKind(t, "Tokenize too deep", err, tokenvault.Invalid)
	if !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("err = %v", err)
	}
	_, err = e.v.Detokenize(ctx, creator.Key, deep)
	wantKind(t, "Detokenize too deep", err, tokenvault.Invalid)
	tok := e.token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
	_, err = e.v.UpdateToken(ctx, creator.Key, tok.ID, json.RawMessage(`{"metadata": `+string(deep)+`}`))
	wantKind(t, "UpdateToken too deep", err, tokenvault.Invalid)
	r := e.reactor(t, tokenvault.CreateReactorRequest{Code: echoCode})
	_, err = e.v.InvokeReactor(ctx, creator.Key, r.ID, tokenvault.InvokeReactorRequest{Args: deep})
	wantKind(t, "InvokeReactor too deep", err, tokenvault.Invalid)
	// Brackets inside strings do not count.
	if _, err := e.v.Tokenize(ctx, creator.Key, map[string]any{"s": strings.Repeat("[{", 1000)}); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
}

func TestTokensPerRequestLimit(t *testing.T) {
	e := newEnv(t)
	creator := e.app(t, tokenvault.Private, "token:create")
	body := make([]any, 10001)
	for i := range body {
		body[i] = i
	}
	settleChain(t, e.v) // the set-up's lines linked: the linker's writes are not the request's
	before := len(dump(t, e.store))
	_, err := e.v.Tokenize(ctx, creator.Key, body)
	wantKind(t, "10,001 tokens in one request", err, tokenvault.Invalid)
	if !strings.Contains(err.Error(), "10000") {
		t.Errorf("err = %v, want the limit named", err)
	}
	if after := len(dump(t, e.store)); after != before {
		t.Errorf("a refused request wrote %d entries", after-before)
	}
}
