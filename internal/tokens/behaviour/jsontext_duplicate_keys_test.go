package tokens_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestDuplicateKeysRefused: a JSON text from a caller with a key twice in
// one object is Invalid, naming the member, and nothing is stored or
// forwarded: encoding/json would keep the last value without a word.
func TestDuplicateKeysRefused(t *testing.T) {
	e := vaulttest.NewEnv(t)
	user := e.User(t)
	_, err := e.V.Tokenize(ctx, user, json.RawMessage(`{"v": "x", "v": "y"}`))
	vaulttest.WantField(t, err, "v")
	_, err = e.V.Tokenize(ctx, user, json.RawMessage(`{"type": "token", "data": {"n": 1, "m": {}, "\u006e": 2}}`))
	vaulttest.WantField(t, err, "data.n")
	_, err = e.V.CreateToken(ctx, user, tokenvault.TokenRequest{Type: "token", Data: json.RawMessage(`{"a": [{"b": 1, "b": 1}]}`)})
	vaulttest.WantField(t, err, "data.a[0].b")
	page, err := e.V.ListTokens(ctx, user, tokenvault.ListTokensRequest{})
	if err != nil || page.Pagination.TotalItems != 0 {
		t.Errorf("ListTokens = %+v, %v; want nothing stored", page, err)
	}

	p := e.Proxy(t, tokenvault.ProxyRequest{Name: "p", DestinationURL: vaulttest.NewDestination(t).Srv.URL})
	err = e.V.PatchProxy(ctx, e.Mgmt, p.ID, json.RawMessage(`{"name": "a", "name": "b"}`))
	vaulttest.WantField(t, err, "name")
	_, err = e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, user, "/pay", `{"card": {"n": "1", "n": "2"}}`))
	vaulttest.WantField(t, err, "card.n")
}

// TestDuplicateKeysInAnswers: a destination's answer is the destination's
// affair; its response transform reads it keeping the last of a key given
// twice, as a browser's JSON.parse does.
func TestDuplicateKeysInAnswers(t *testing.T) {
	e := vaulttest.NewEnv(t)
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"card": "4111111111111111", "card": "4242424242424242"}`)
	}))
	defer dest.Close()
	p := e.Proxy(t, tokenvault.ProxyRequest{Name: "p", DestinationURL: dest.URL,
		ResponseTransform: &tokenvault.ProxyTransform{Code: `module.exports = async function (req) {
			return {body: {last4: req.args.body.card.slice(-4)}};
		}`}})
	res, err := e.V.InvokeProxy(ctx, vaulttest.JSONCall(p.Key, e.User(t), "", `{}`))
	if err != nil || string(res.Body) != `{"last4":"4242"}` {
		t.Errorf("InvokeProxy = %v, %v; want the transform's {\"last4\":\"4242\"}", res, err)
	}
}

// TestCaseVariantKeysRefused: in process, a JSON text whose object gives
// a field twice in keys that differ only in case, as encoding/json
// matches them (strings.EqualFold: "DATA", "mas\u212a" with the Kelvin
// sign for "mask", "ſ" for "s"), is Invalid naming the field, and
// nothing is stored or changed; a map's keys stay exact: metadata "a"
// and "A" are two keys.
func TestCaseVariantKeysRefused(t *testing.T) {
	e := vaulttest.NewEnv(t)
	user := e.User(t)
	for body, field := range map[string]string{
		`{"type": "token", "data": "x", "DATA": "y"}`:                                             "data",
		`{"type": "token", "data": "x", "mask": "{{ data | last4 }}", "mas\u212a": "{{ data }}"}`: "mask",
		`{"type": "token", "data": "x", "containers": ["/a"], "containerſ": ["/b"]}`:              "containers",
		`{"cards": [{"type": "token", "data": "x", "ID": "a", "id": "b"}]}`:                       "cards[0].id",
		`[{"type": "token", "data": "x", "Type": "card"}]`:                                        "[0].type",
	} {
		_, err := e.V.Tokenize(ctx, user, json.RawMessage(body))
		vaulttest.WantField(t, err, field)
	}
	page, err := e.V.ListTokens(ctx, user, tokenvault.ListTokensRequest{})
	if err != nil || page.Pagination.TotalItems != 0 {
		t.Errorf("ListTokens = %+v, %v; want nothing stored", page, err)
	}
	out, err := e.V.Tokenize(ctx, user, json.RawMessage(`{"type": "token", "data": "x", "metadata": {"a": "1", "A": "2"}}`))
	if tok, _ := out.(*tokenvault.Token); err != nil || tok == nil || tok.Metadata["a"] != "1" || tok.Metadata["A"] != "2" {
		t.Errorf("Tokenize with metadata a and A = %v, %v; want both kept", out, err)
	}

	p := e.Proxy(t, tokenvault.ProxyRequest{Name: "p", DestinationURL: vaulttest.NewDestination(t).Srv.URL,
		RequestTransform: &tokenvault.ProxyTransform{Code: `module.exports = async (req) => req`}})
	err = e.V.PatchProxy(ctx, e.Mgmt, p.ID, json.RawMessage(`{"request_transform": {"CODE": "module.exports = 1"}}`))
	vaulttest.WantField(t, err, "request_transform.code")
	err = e.V.PatchProxy(ctx, e.Mgmt, p.ID, json.RawMessage(`{"name": "q", "NAME": "r"}`))
	vaulttest.WantKind(t, "PatchProxy with name and NAME", err, tokenvault.Invalid)
	got, err := e.V.GetProxy(ctx, e.Mgmt, p.ID)
	if err != nil || got.Name != "p" || got.RequestTransform == nil || got.RequestTransform.Code != `module.exports = async (req) => req` {
		t.Errorf("GetProxy = %+v, %v; want it unchanged", got, err)
	}
}
