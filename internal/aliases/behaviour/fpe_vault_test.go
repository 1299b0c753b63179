package aliases_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestFPEEncodeDecode: encoding is deterministic in a tenant, differs
// across tenants and tweaks, keeps the format, and decodes back; cards
// keep BIN and last four and fail the Luhn check unless asked.
func TestFPEEncodeDecode(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	app := e.App(t, tokenvault.Private, tokenvault.PermFPEEncode, tokenvault.PermFPEDecode)
	for _, c := range []struct {
		req   tokenvault.FPERequest
		check func(in, out string) bool
	}{
		{tokenvault.FPERequest{Transformation: "digits", Values: []string{"123-45-6789", "0000001"}},
			func(in, out string) bool {
				return len(out) == len(in) && strings.Count(out, "-") == strings.Count(in, "-")
			}},
		{tokenvault.FPERequest{Transformation: "alphanumeric", Tweak: "orders", Values: []string{"AB12cd34"}},
			func(in, out string) bool { return len(out) == len(in) }},
		{tokenvault.FPERequest{Transformation: "card_bin_last4", Values: []string{"4242 4242 4242 4242"}},
			func(in, out string) bool { return out[:7] == in[:7] && out[15:] == in[15:] && !fpeLuhnValid(out) }},
		{tokenvault.FPERequest{Transformation: "card_luhn", Values: []string{"5555555555554444"}},
			func(in, out string) bool { return fpeLuhnValid(out) }},
		{tokenvault.FPERequest{Alphabet: "ACGT", Values: []string{"GATTACAGATTACA"}},
			func(in, out string) bool { return strings.Trim(out, "ACGT") == "" && len(out) == len(in) }},
	} {
		enc, err := e.V.FPEEncode(ctx, app.Key, c.req)
		if err != nil {
			t.Fatalf("FPEEncode(%+v): %v", c.req, err)
		}
		again, _ := e.V.FPEEncode(ctx, app.Key, c.req)
		for i, in := range c.req.Values {
			out := enc.Values[i]
			if out == in || !c.check(in, out) {
				t.Errorf("%s: %q encoded as %q", c.req.Transformation+c.req.Alphabet, in, out)
			}
			if again.Values[i] != out {
				t.Errorf("%s: not deterministic: %q then %q", c.req.Transformation+c.req.Alphabet, out, again.Values[i])
			}
		}
		dreq := c.req
		dreq.Values = enc.Values
		dec, err := e.V.FPEDecode(ctx, app.Key, dreq)
		if err != nil {
			t.Fatalf("FPEDecode: %v", err)
		}
		if strings.Join(dec.Values, ",") != strings.Join(c.req.Values, ",") {
			t.Errorf("decoded %q, want %q", dec.Values, c.req.Values)
		}
	}

	// Another tweak, another tenant: other results.
	req := tokenvault.FPERequest{Transformation: "digits", Values: []string{"4242424242424242"}}
	a, _ := e.V.FPEEncode(ctx, app.Key, req)
	req.Tweak = "x"
	b, _ := e.V.FPEEncode(ctx, app.Key, req)
	other := e.Tenant(t, "Other")
	otherApp, err := e.V.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "p", Type: tokenvault.Private, Permissions: []string{tokenvault.PermFPEEncode},
	})
	if err != nil {
		t.Fatal(err)
	}
	req.Tweak = ""
	c, _ := e.V.FPEEncode(ctx, otherApp.Key, req)
	if a.Values[0] == b.Values[0] || a.Values[0] == c.Values[0] {
		t.Errorf("tweak or tenant changes nothing: %q %q %q", a.Values, b.Values, c.Values)
	}
}

type fpeReq = tokenvault.FPERequest

func fpeLuhnValid(s string) bool {
	sum, n := 0, 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] < '0' || s[i] > '9' {
			continue
		}
		d := int(s[i] - '0')
		if n%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
	}
	return sum%10 == 0
}

// TestFPEHostileInput: every bad request is Invalid naming its field,
// never quoting the value, and a key without the permission is refused.
func TestFPEHostileInput(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	app := e.App(t, tokenvault.Private, tokenvault.PermFPEEncode, tokenvault.PermFPEDecode)
	const secret = "98765x4321"
	for name, c := range map[string]struct {
		req   tokenvault.FPERequest
		field string
	}{
		"wrong alphabet":      {fpeReq{Transformation: "digits", Values: []string{"1234567", secret}}, "values[1]"},
		"too short":           {fpeReq{Transformation: "digits", Values: []string{"12345"}}, "values[0]"},
		"too long":            {fpeReq{Transformation: "digits", Values: []string{strings.Repeat("1", 1025)}}, "values[0]"},
		"bad card":            {fpeReq{Transformation: "card", Values: []string{"4242424242424241"}}, "values[0]"},
		"card too short kept": {fpeReq{Transformation: "card_bin_last4", Values: []string{"424242424242"}}, "values[0]"},
		"long tweak":          {fpeReq{Transformation: "digits", Tweak: strings.Repeat("t", 257), Values: []string{"123456"}}, "tweak"},
		"bad utf-8 tweak":     {fpeReq{Transformation: "digits", Tweak: "\xff", Values: []string{"123456"}}, "tweak"},
		"card tweak":          {fpeReq{Transformation: "card", Tweak: strings.Repeat("t", 250), Values: []string{"4242424242424242"}}, "values[0]"},
		"unknown":             {fpeReq{Transformation: "hex", Values: []string{"123456"}}, "transformation"},
		"none":                {fpeReq{Values: []string{"123456"}}, "transformation"},
		"both":                {fpeReq{Transformation: "digits", Alphabet: "01", Values: []string{"123456"}}, "alphabet"},
		"bad alphabet":        {fpeReq{Alphabet: "aab", Values: []string{"ab"}}, "alphabet"},
		"no values":           {fpeReq{Transformation: "digits"}, "values"},
		"too many values":     {fpeReq{Transformation: "digits", Values: make([]string, 101)}, "values"},
	} {
		for _, op := range []func(context.Context, tokenvault.Credential, tokenvault.FPERequest) (*tokenvault.FPEResult, error){e.V.FPEEncode, e.V.FPEDecode} {
			_, err := op(ctx, app.Key, c.req)
			vaulttest.WantKind(t, name, err, tokenvault.Invalid)
			if !strings.Contains(err.Error(), c.field) || strings.Contains(err.Error(), secret) {
				t.Errorf("%s: %v (want field %s, no value)", name, err, c.field)
			}
		}
	}
	// A Luhn-valid number was never made by "card".
	_, err := e.V.FPEDecode(ctx, app.Key, fpeReq{Transformation: "card", Values: []string{"4242424242424242"}})
	vaulttest.WantKind(t, "decode of a card number", err, tokenvault.Invalid)

	enc := e.App(t, tokenvault.Public, tokenvault.PermFPEEncode)
	req := fpeReq{Transformation: "digits", Values: []string{"123456"}}
	out, err := e.V.FPEEncode(ctx, enc.Key, req)
	if err != nil {
		t.Fatalf("a public key encodes: %v", err)
	}
	req.Values = out.Values
	_, err = e.V.FPEDecode(ctx, enc.Key, req)
	vaulttest.WantKind(t, "decode without fpe:decode", err, tokenvault.PermissionDenied)
	reader := e.App(t, tokenvault.Private, tokenvault.PermTokenRead)
	_, err = e.V.FPEEncode(ctx, reader.Key, req)
	vaulttest.WantKind(t, "encode without fpe:encode", err, tokenvault.PermissionDenied)
	_, err = e.V.FPEEncode(ctx, "nope", req)
	vaulttest.WantKind(t, "encode with no key", err, tokenvault.Unauthenticated)
	_, err = e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{
		Name: "p", Type: tokenvault.Public, Permissions: []string{tokenvault.PermFPEDecode},
	})
	vaulttest.WantKind(t, "a public application with fpe:decode", err, tokenvault.Invalid)
}

// TestFPEDecodeAudited: each decode is one read line naming the
// transformation and never the values; encodes write nothing.
func TestFPEDecodeAudited(t *testing.T) {
	e := vaulttest.NewEnv(t)
	ctx := context.Background()
	app := e.App(t, tokenvault.Private, tokenvault.PermFPEEncode, tokenvault.PermFPEDecode)
	req := fpeReq{Transformation: "digits", Values: []string{"31415926535"}}
	out, err := e.V.FPEEncode(ctx, app.Key, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Values = out.Values
	if _, err := e.V.FPEDecode(ctx, app.Key, req); err != nil {
		t.Fatal(err)
	}
	logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityFPE})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs.Data) != 1 {
		t.Fatalf("%d fpe lines, want 1 (the decode): %+v", len(logs.Data), logs.Data)
	}
	l := logs.Data[0]
	if l.Operation != tokenvault.OpRead || l.EntityID != "digits" || l.ActorID != app.ID ||
		strings.Contains(l.Message, "31415926535") || strings.Contains(l.Message, out.Values[0]) {
		t.Errorf("decode line %+v", l)
	}
}

// TestFPEKeyOutlivesRotationAndReopen: what was encoded decodes, and
// encodes the same, after a data key rotation, a re-seal and reopening
// the Vault (the key comes back from the wrapped keyring).
func TestFPEKeyOutlivesRotationAndReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vault.db")
	key := vaulttest.NewMasterKey()
	open := func() *tokenvault.Vault {
		v, err := tokenvault.Open(ctx, tokenvault.Options{Path: path, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := open()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "A", Owner: tokenvault.User{Email: "o@example.com", FirstName: "O"}})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "p", Type: tokenvault.Private, Permissions: []string{tokenvault.PermFPEEncode, tokenvault.PermFPEDecode},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := fpeReq{Transformation: "card_bin_last4", Tweak: "t", Values: []string{"4000 0566 5566 5556"}}
	before, err := v.FPEEncode(ctx, app.Key, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.RotateDataKey(ctx, boot.Application.Key); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Reseal(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(v *tokenvault.Vault, when string) {
		after, err := v.FPEEncode(ctx, app.Key, req)
		if err != nil || after.Values[0] != before.Values[0] {
			t.Errorf("%s: encoded %v, %v; before %v", when, after, err, before.Values)
		}
		dreq := req
		dreq.Values = before.Values
		dec, err := v.FPEDecode(ctx, app.Key, dreq)
		if err != nil || dec.Values[0] != req.Values[0] {
			t.Errorf("%s: decoded %v, %v", when, dec, err)
		}
	}
	check(v, "after rotation")
	v.Close()
	v = open()
	defer v.Close()
	check(v, "after reopening")
}

// TestFPERateLimited: encode and decode calls are charged against the
// key's rate like every call.
func TestFPERateLimited(t *testing.T) {
	e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.Limits.RatePerKey = 2 })
	ctx := context.Background()
	app := e.App(t, tokenvault.Private, tokenvault.PermFPEEncode, tokenvault.PermFPEDecode)
	req := fpeReq{Transformation: "digits", Values: []string{"1234567"}}
	if _, err := e.V.FPEEncode(ctx, app.Key, req); err != nil {
		t.Fatal(err)
	}
	if _, err := e.V.FPEDecode(ctx, app.Key, req); err != nil {
		t.Fatal(err)
	}
	_, err := e.V.FPEDecode(ctx, app.Key, req)
	vaulttest.WantRateLimited(t, "a third call in the same instant", err, 500*time.Millisecond)
	_, err = e.V.FPEEncode(ctx, app.Key, req)
	vaulttest.WantRateLimited(t, "an encode after it", err, 500*time.Millisecond)
}
