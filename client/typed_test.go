package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestTypedEntryPointsOverHTTP: TokenizeCard, TokenizeValue, TokenizeAs
// and DetokenizeAs answer through the client what they answer in process.
func TestTypedEntryPointsOverHTTP(t *testing.T) {
	p := newParity(t)
	ctx := context.Background()
	card := tokenvault.Card{Number: "4242424242424242", ExpirationMonth: 12, ExpirationYear: 2999}
	inProcess, err := p.v.TokenizeCard(ctx, p.user, card)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := p.c.TokenizeCard(ctx, p.user, card)
	if err != nil {
		t.Fatal(err)
	}
	if remote.Type != tokenvault.TypeCard || !reflect.DeepEqual(roundTripJSON(t, remote.Data), roundTripJSON(t, inProcess.Data)) {
		t.Errorf("client TokenizeCard = %s %v, Vault.TokenizeCard = %s %v", remote.Type, remote.Data, inProcess.Type, inProcess.Data)
	}
	card.ExpirationMonth = 13
	_, errIn := p.v.TokenizeCard(ctx, p.user, card)
	_, errRemote := p.c.TokenizeCard(ctx, p.user, card)
	if kindAndFields(errIn) != kindAndFields(errRemote) || tokenvault.ErrorKind(errRemote) != tokenvault.Invalid {
		t.Errorf("bad card: client %s, Vault %s; want the same Invalid", kindAndFields(errRemote), kindAndFields(errIn))
	}

	v, err := p.c.TokenizeValue(ctx, p.user, "078-05-1120")
	if err != nil || v.Type != tokenvault.TypeToken {
		t.Fatalf("client TokenizeValue = %+v, %v", v, err)
	}
	if got, err := p.v.GetToken(ctx, p.user, v.ID); err != nil || got.Data != "078-05-1120" {
		t.Errorf("the value tokenized over HTTP reads back as %v, %v", got, err)
	}

	type order struct {
		Card  string   `json:"card"`
		Items []string `json:"items"`
	}
	in := order{Card: "4242", Items: []string{"a", "b"}}
	tok, err := tokenvault.TokenizeAs(ctx, p.c, p.user, in)
	if err != nil {
		t.Fatalf("TokenizeAs(client): %v", err)
	}
	for name, r := range map[string]tokenvault.TokenReader{"client": p.c, "vault": p.v} {
		out, err := tokenvault.DetokenizeAs[order](ctx, r, p.user, tok.ID)
		if err != nil || !reflect.DeepEqual(out, in) {
			t.Errorf("DetokenizeAs[order](%s) = %+v, %v; want %+v", name, out, err, in)
		}
	}
	_, errIn = tokenvault.DetokenizeAs[order](ctx, p.v, p.user, "no-such-token")
	_, errRemote = tokenvault.DetokenizeAs[order](ctx, p.c, p.user, "no-such-token")
	if kindAndFields(errIn) != kindAndFields(errRemote) || tokenvault.ErrorKind(errRemote) != tokenvault.NotFound {
		t.Errorf("unknown token: client %s, Vault %s; want the same NotFound", kindAndFields(errRemote), kindAndFields(errIn))
	}
}

// roundTripJSON re-encodes v as plain JSON values, as both sides compare.
func roundTripJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// kindAndFields describes err by its kind and fields (the status is the
// HTTP layer's).
func kindAndFields(err error) string {
	var e *tokenvault.Error
	if !errors.As(err, &e) {
		return fmt.Sprint(err)
	}
	return fmt.Sprintf("%v fields=%v", e.Kind, e.Fields)
}
