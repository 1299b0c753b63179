package vaulttest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// nested returns a JSON document n levels deep.
func nested(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, n-1) + `["x"]` + strings.Repeat("}", n-1))
}

func TestJSONDepthLimit(t *testing.T) {
	e := vaulttest.NewEnv(t)
	creator := e.Reader(t, "reveal", "token:create", "token:read", "token:update", "token:use")
	if _, err := e.V.Tokenize(ctx, creator.Key, nested(tokenvault.MaxJSONDepth)); err != nil {
		t.Fatalf("a body %d levels deep: %v", tokenvault.MaxJSONDepth, err)
	}
	deep := nested(tokenvault.MaxJSONDepth + 1)
	_, err := e.V.Tokenize(ctx, creator.Key, deep)
	vaulttest.WantKind(t, "Tokenize too deep", err, tokenvault.Invalid)
	if !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("err = %v", err)
	}
	_, err = e.V.Detokenize(ctx, creator.Key, deep)
	vaulttest.WantKind(t, "Detokenize too deep", err, tokenvault.Invalid)
	tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "x"})
	_, err = e.V.UpdateToken(ctx, creator.Key, tok.ID, json.RawMessage(`{"metadata": `+string(deep)+`}`))
	vaulttest.WantKind(t, "UpdateToken too deep", err, tokenvault.Invalid)
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: vaulttest.EchoCode})
	_, err = e.V.InvokeReactor(ctx, creator.Key, r.ID, tokenvault.InvokeReactorRequest{Args: deep})
	vaulttest.WantKind(t, "InvokeReactor too deep", err, tokenvault.Invalid)
	// Brackets inside strings do not count.
	if _, err := e.V.Tokenize(ctx, creator.Key, map[string]any{"s": strings.Repeat("[{", 1000)}); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
}

func TestTokensPerRequestLimit(t *testing.T) {
	e := vaulttest.NewEnv(t)
	creator := e.App(t, tokenvault.Private, "token:create")
	body := make([]any, 10001)
	for i := range body {
		body[i] = i
	}
	e.SettleChain(t) // the set-up's lines linked: the linker's writes are not the request's
	before := len(vaulttest.Dump(t, e.Store))
	_, err := e.V.Tokenize(ctx, creator.Key, body)
	vaulttest.WantKind(t, "10,001 tokens in one request", err, tokenvault.Invalid)
	if !strings.Contains(err.Error(), "10000") {
		t.Errorf("err = %v, want the limit named", err)
	}
	if after := len(vaulttest.Dump(t, e.Store)); after != before {
		t.Errorf("a refused request wrote %d entries", after-before)
	}
}
