package reactors_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// proxyFuzzContentTypes are the content types FuzzProxyBody picks from by
// its kind argument; past the end it uses its fuzzed content type.
var proxyFuzzContentTypes = []string{"application/json", "application/x-www-form-urlencoded", "text/plain"}

// FuzzProxyBody sends arbitrary bodies through a proxy to a loopback
// destination that answers with the body it received. The arguments are
// the body, a kind (0 JSON, 1 form, 2 text/plain, 3 and above the fuzzed
// content type) and that content type. In the body $TOK and $CARD stand
// for the ids of a real plain token and a real card token, so bodies can
// embed {{$TOK}} next to {{garbage}}.
//
// InvokeProxy must not panic, and must return either the destination's
// answer or an *Error of a client kind: never Internal, nor one of the
// kinds of a failed dependency (Unavailable, CodeFailed, BadGateway),
// since the destination always answers. What the destination received
// is checked too: a body of another content type is forwarded byte for
// byte, and a JSON or form body without expressions arrives with the same
// content.
//
// Seeds are in testdata/fuzz/FuzzProxyBody.
func FuzzProxyBody(f *testing.F) {
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	}))
	f.Cleanup(dest.Close)
	client := dest.Client()
	f.Fuzz(func(t *testing.T, body []byte, kind uint8, contentType string) {
		// A fresh Vault for every input: failures reproduce from the input
		// alone, and the store does not grow with the run. They share one
		// HTTP client, so their connections are reused, not left open.
		e := vaulttest.NewEnvOn(t, memory.New(), func(o *tokenvault.Options) { o.HTTPClient = client })
		p, err := e.V.CreateProxy(ctx, e.Mgmt, tokenvault.ProxyRequest{Name: "fuzz", DestinationURL: dest.URL + "/echo"})
		if err != nil {
			t.Fatalf("CreateProxy: %v", err)
		}
		user := e.Reader(t, "reveal", "token:use", "token:read", "token:create").Key
		tok, err := e.V.CreateToken(ctx, user, tokenvault.TokenRequest{ID: "tok-ada", Type: "token", Data: "Ada Lovelace"})
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		cardReq := vaulttest.CardRequest(vaulttest.Visa)
		cardReq.ID = "card-visa"
		card, err := e.V.CreateToken(ctx, user, cardReq)
		if err != nil {
			t.Fatalf("CreateToken(card): %v", err)
		}

		body = bytes.ReplaceAll(body, []byte("$TOK"), []byte(tok.ID))
		body = bytes.ReplaceAll(body, []byte("$CARD"), []byte(card.ID))
		ct := contentType
		if int(kind) < len(proxyFuzzContentTypes) {
			ct = proxyFuzzContentTypes[kind]
		}
		call := tokenvault.ProxyCall{ProxyKey: p.Key, APIKey: user, Method: "POST", Path: "/x",
			Header: http.Header{"Content-Type": {ct}}, Body: body}
		res, err := e.V.InvokeProxy(ctx, call)
		if err != nil {
			switch k := tokenvault.ErrorKind(err); k {
			case tokenvault.Internal, tokenvault.Unavailable, tokenvault.CodeFailed, tokenvault.BadGateway:
				t.Fatalf("InvokeProxy(Content-Type %q, body %q) = %v (kind %v), a server error for client input", ct, body, err, k)
			}
			return
		}
		if res == nil || res.Status != http.StatusOK {
			t.Fatalf("InvokeProxy(Content-Type %q, body %q) = %+v, want the destination's 200", ct, body, res)
		}
		got := res.Body
		mt, _, mtErr := mime.ParseMediaType(ct)
		switch {
		case mtErr == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")):
			if len(bytes.TrimSpace(body)) == 0 {
				if len(bytes.TrimSpace(got)) != 0 {
					t.Fatalf("an empty JSON body arrived as %q", got)
				}
				return
			}
			sent := decodeFuzzJSON(t, body)
			if hasExpression(sent) {
				return
			}
			if arrived := decodeFuzzJSON(t, got); !reflect.DeepEqual(arrived, sent) {
				t.Fatalf("JSON body %q without expressions arrived as %q", body, got)
			}
		case mtErr == nil && mt == "application/x-www-form-urlencoded":
			sent, _ := url.ParseQuery(string(body))
			for _, vs := range sent {
				for _, v := range vs {
					if strings.Contains(v, "{{") {
						return
					}
				}
			}
			if arrived, err := url.ParseQuery(string(got)); err != nil || !reflect.DeepEqual(arrived, sent) {
				t.Fatalf("form body %q without expressions arrived as %q", body, got)
			}
		default:
			if !bytes.Equal(got, body) {
				t.Fatalf("body %q of type %q arrived as %q, want it untouched", body, ct, got)
			}
		}
	})
}

// decodeFuzzJSON decodes the first JSON value of b, as the Vault does.
func decodeFuzzJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q is not JSON: %v", b, err)
	}
	return v
}

// hasExpression reports whether a string value in v holds "{{".
func hasExpression(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "{{")
	case map[string]any:
		for _, e := range x {
			if hasExpression(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasExpression(e) {
				return true
			}
		}
	}
	return false
}

// TestProxyRefusesInvalidHeaders: headers net/http will not send are the
// caller's error (Invalid, naming them), found before the call is
// detokenized, logged or forwarded; they used to be sent to the transport
// and reported as BadGateway (found by FuzzProxyBody).
func TestProxyRefusesInvalidHeaders(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL})
	user := e.User(t)
	for name, value := range map[string]string{
		"Content-Type": "\b",
		"X-Bad":        "a\r\nX-Injected: 1",
		"X-Nul":        "a\x00b",
		"X-Del":        "\x7f",
		"Bad Name":     "x",
		"Bad:Name":     "x",
		"":             "x",
	} {
		call := vaulttest.JSONCall(p.Key, user, "", `{"a": 1}`)
		call.Header[name] = []string{value}
		_, err := e.V.InvokeProxy(ctx, call)
		vaulttest.WantField(t, err, "headers."+name)
	}
	d.Mu.Lock()
	if d.Method != "" {
		t.Errorf("the destination was called: %s %s", d.Method, d.Body)
	}
	d.Mu.Unlock()

	// Tabs, spaces and bytes past ASCII (obs-text) are allowed.
	call := vaulttest.JSONCall(p.Key, user, "", `{"a": 1}`)
	call.Header.Set("X-Fine", "caf\xc3\xa9 \t ok")
	if _, err := e.V.InvokeProxy(ctx, call); err != nil {
		t.Fatalf("InvokeProxy with a valid header: %v", err)
	}
	d.Mu.Lock()
	if got := d.Header.Get("X-Fine"); got != "caf\xc3\xa9 \t ok" {
		t.Errorf("X-Fine arrived as %q", got)
	}
	d.Mu.Unlock()
}

// TestProxyForwardsJSONNull: a JSON body that is null, as sent or once
// detokenized, arrives as null; it used to arrive as an empty body (found
// by FuzzProxyBody). An empty body stays empty.
func TestProxyForwardsJSONNull(t *testing.T) {
	e := vaulttest.NewEnv(t)
	d := vaulttest.NewDestination(t)
	p := e.Proxy(t, tokenvault.ProxyRequest{DestinationURL: d.Srv.URL})
	tok := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "Ada"})
	redacted := e.Reader(t, "redact", "token:use").Key
	for _, tc := range []struct {
		key        tokenvault.Credential
		body, want string
	}{
		{e.User(t), "null", "null"},
		{e.User(t), " null\n", "null"},
		{redacted, `"{{` + tok.ID + `}}"`, "null"},
		{e.User(t), `"{{` + tok.ID + `}}"`, `"Ada"`},
		{e.User(t), "", ""},
		{e.User(t), " \n", ""},
	} {
		if _, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, tc.key, "", tc.body)); err != nil {
			t.Fatalf("InvokeProxy(%q): %v", tc.body, err)
		}
		d.Mu.Lock()
		if d.Body != tc.want {
			t.Errorf("JSON body %q arrived as %q, want %q", tc.body, d.Body, tc.want)
		}
		d.Mu.Unlock()
	}
}
