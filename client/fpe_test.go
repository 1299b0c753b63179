package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault"
)

// TestFPEThroughTheClient: over HTTP, encode gives what it gives in
// process, decode returns the values, and every refusal has the kind and
// fields it has in process.
func TestFPEThroughTheClient(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	app, err := p.v.CreateApplication(ctx, p.mgmt, tokenvault.CreateApplicationRequest{Name: "fpe", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermFPEEncode, tokenvault.PermFPEDecode}})
	if err != nil {
		t.Fatal(err)
	}
	req := tokenvault.FPERequest{Transformation: "card_bin_last4", Tweak: "orders", Values: []string{"4242-4242-4242-4242", "5555 5555 5555 4444"}}
	inProcess, err := p.v.FPEEncode(ctx, app.Key, req)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := p.c.FPEEncode(ctx, app.Key, req)
	if err != nil || !cmp.Equal(remote, inProcess) {
		t.Fatalf("FPEEncode through the client = %+v, %v; in process %+v", remote, err, inProcess)
	}
	dreq := req
	dreq.Values = remote.Values
	dec, err := p.c.FPEDecode(ctx, app.Key, dreq)
	if err != nil || !cmp.Equal(dec.Values, req.Values) {
		t.Fatalf("FPEDecode through the client = %+v, %v", dec, err)
	}

	for name, c := range map[string]struct {
		key tokenvault.Credential
		req tokenvault.FPERequest
	}{
		"wrong alphabet": {app.Key, tokenvault.FPERequest{Transformation: "digits", Values: []string{"12345a"}}},
		"too short":      {app.Key, tokenvault.FPERequest{Alphabet: "01", Values: []string{"0101"}}},
		"too long":       {app.Key, tokenvault.FPERequest{Transformation: "digits", Values: []string{strings.Repeat("9", 2000)}}},
		"bad tweak":      {app.Key, tokenvault.FPERequest{Transformation: "digits", Tweak: strings.Repeat("é", 200), Values: []string{"123456"}}},
		"no permission":  {p.user, tokenvault.FPERequest{Transformation: "digits", Values: []string{"123456"}}},
		"no key":         {"", tokenvault.FPERequest{Transformation: "digits", Values: []string{"123456"}}},
	} {
		_, errIn := p.v.FPEDecode(ctx, c.key, c.req)
		_, errRemote := p.c.FPEDecode(ctx, c.key, c.req)
		var in, rem *tokenvault.Error
		if errIn == nil || !errors.As(errIn, &in) || !errors.As(errRemote, &rem) || in.Kind != rem.Kind || !cmp.Equal(in.Fields, rem.Fields) {
			t.Errorf("%s: in process %v, client %v", name, errIn, errRemote)
		}
	}
}

// TestRotateFPEKeyThroughTheClient: RotateFPEKey through the client
// answers the new version, and what the old version encoded decodes
// through the client when the request names it.
func TestRotateFPEKeyThroughTheClient(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	app, err := p.v.CreateApplication(ctx, p.mgmt, tokenvault.CreateApplicationRequest{Name: "fpe", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermFPEEncode, tokenvault.PermFPEDecode}})
	if err != nil {
		t.Fatal(err)
	}
	req := tokenvault.FPERequest{Transformation: "digits", Values: []string{"0123456789"}}
	old, err := p.c.FPEEncode(ctx, app.Key, req)
	if err != nil || old.KeyVersion != 1 {
		t.Fatalf("FPEEncode through the client = %+v, %v; want key version 1", old, err)
	}
	if version, err := p.c.RotateFPEKey(ctx, p.mgmt); err != nil || version != 2 {
		t.Fatalf("RotateFPEKey through the client = %d, %v; want 2", version, err)
	}
	dreq := req
	dreq.Values, dreq.KeyVersion = old.Values, 1
	dec, err := p.c.FPEDecode(ctx, app.Key, dreq)
	if err != nil || !cmp.Equal(dec.Values, req.Values) || dec.KeyVersion != 1 {
		t.Errorf("FPEDecode of a version 1 encoding through the client = %+v, %v", dec, err)
	}
}
