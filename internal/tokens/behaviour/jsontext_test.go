package tokens_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestTokenizeRefusesLossyText: a body holding invalid UTF-8 or a lone
// surrogate escape is refused with the string's path, and nothing is
// stored; encoding/json would store U+FFFD instead of what was sent.
func TestTokenizeRefusesLossyText(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	creator, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "backend", Type: tokenvault.Private, Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/",
			Transform: "reveal", Permissions: []string{"token:create", "token:read"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body, path string
	}{
		{"lone high surrogate in data", `{"type": "token", "data": "a\ud800b"}`, "data"},
		{"lone low surrogate in nested data", `{"user": {"type": "token", "data": {"name": "\udc00"}}}`, "user.data.name"},
		{"high surrogate followed by a non-surrogate", `["x", "y", {"type": "token", "data": "\ud800\u0041"}]`, "[2].data"},
		{"invalid byte", `{"type": "token", "data": "ok", "metadata": {"ref": "` + "\xff" + `"}}`, "metadata.ref"},
		{"invalid byte in a plain value", `{"a": "fine", "b": "` + "caf\xe9" + `"}`, "b"},
		{"bad key", `{"type": "token", "data": {"` + "\xff" + `": "x"}}`, "data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.V.Tokenize(ctx, creator.Key, json.RawMessage(tc.body))
			vaulttest.WantKind(t, "Tokenize", err, tokenvault.Invalid)
			var te *tokenvault.Error
			if !errors.As(err, &te) || len(te.Fields[tc.path]) == 0 {
				t.Fatalf("Tokenize(%q) = %v, want a field error at %q", tc.body, err, tc.path)
			}
		})
	}
	list, err := e.V.ListTokens(ctx, creator.Key, tokenvault.ListTokensRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if list.Pagination.TotalItems != 0 {
		t.Errorf("ListTokens after refused bodies = %d tokens, want 0", list.Pagination.TotalItems)
	}

	// A surrogate pair and U+FFFD sent on purpose are kept exactly.
	out, err := e.V.Tokenize(ctx, creator.Key, json.RawMessage(`{"type": "token", "data": "\ud83d\ude00 \ufffd é"}`))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.V.GetToken(ctx, creator.Key, out.(*tokenvault.Token).ID)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Data != "😀 \uFFFD é" {
		t.Errorf("data = %q, want %q", tok.Data, "😀 \uFFFD é")
	}
}

// TestLossyTextElsewhere: detokenize bodies, token patches and reactor
// arguments are held to the same rule.
func TestLossyTextElsewhere(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	backend := e.App(t, tokenvault.Private, "token:create", "token:read", "token:update")
	_, err := e.V.Detokenize(ctx, backend.Key, json.RawMessage(`{"a": ["\ud800"]}`))
	vaulttest.WantField(t, err, "a[0]")

	out, err := e.V.Tokenize(ctx, backend.Key, json.RawMessage(`{"type": "token", "data": "v"}`))
	if err != nil {
		t.Fatal(err)
	}
	id := out.(*tokenvault.Token).ID
	_, err = e.V.UpdateToken(ctx, backend.Key, id, json.RawMessage(`{"metadata": {"k": "\udfff"}}`))
	vaulttest.WantField(t, err, "metadata.k")
	tok, err := e.V.GetToken(ctx, backend.Key, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.Metadata) != 0 {
		t.Errorf("metadata after a refused patch = %v", tok.Metadata)
	}

	_, err = e.V.InvokeReactor(ctx, e.Mgmt, "00000000-0000-7000-8000-000000000000", tokenvault.InvokeReactorRequest{
		Args: json.RawMessage(`{"card": {"number": "` + "\xff" + `"}}`),
	})
	vaulttest.WantField(t, err, "args.card.number")
}

// TestGoValuesWithInvalidUTF8: in process, a Go string that is not UTF-8
// (which encoding/json would store as U+FFFD) is refused the same way.
func TestGoValuesWithInvalidUTF8(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	backend := e.App(t, tokenvault.Private, "token:create", "token:read", "token:use")
	bad := "caf\xe9"
	_, err := e.V.Tokenize(ctx, backend.Key, map[string]any{"user": map[string]any{"type": "token", "data": bad}})
	vaulttest.WantField(t, err, "user.data")
	_, err = e.V.Tokenize(ctx, backend.Key, []any{"ok", map[string]string{"k": bad}})
	vaulttest.WantField(t, err, "[1].k")
	_, err = e.V.CreateToken(ctx, backend.Key, tokenvault.TokenRequest{Type: "token", Data: "ok", Metadata: map[string]string{"ref": bad}})
	vaulttest.WantField(t, err, "metadata.ref")
	_, err = e.V.CreateToken(ctx, backend.Key, tokenvault.TokenRequest{Type: "token", Data: map[string]any{bad: 1}})
	vaulttest.WantField(t, err, "data")
	_, err = e.V.Detokenize(ctx, backend.Key, map[string]any{"a": bad})
	vaulttest.WantField(t, err, "a")
	_, err = e.V.InvokeReactor(ctx, e.Mgmt, "00000000-0000-7000-8000-000000000000", tokenvault.InvokeReactorRequest{
		Args: map[string]any{"card": map[string]any{"number": bad}},
	})
	vaulttest.WantField(t, err, "args.card.number")
	list, err := e.V.ListTokens(ctx, backend.Key, tokenvault.ListTokensRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if list.Pagination.TotalItems != 0 {
		t.Errorf("%d tokens stored", list.Pagination.TotalItems)
	}
}
