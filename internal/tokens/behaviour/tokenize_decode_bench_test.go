package tokens_test

import (
	"fmt"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store/memory"
)

// The benchmarks of this file count what decoding costs a request in
// process: a card given as Go values, and reactor invocations whose code
// echoes its arguments or calls req.client.tokenize once, in worker
// processes (only this process's allocations are counted) and in process
// (the runtime's too). Run with:
//
//	go test -run '^$' -bench 'TokenizeCard|InvokeReactorDecode' -benchmem .

// cardJSON is the card the decoding benchmarks tokenize, as a JSON body.
const cardJSON = `{"type":"card","data":{"number":"4242424242424242","expiration_month":12,"expiration_year":2031,"cvc":"123"}}`

// BenchmarkTokenizeCardValue tokenizes a card given as Go values (maps),
// as an embedding program does.
func BenchmarkTokenizeCardValue(b *testing.B) {
	e := vaulttest.NewEnvOn(b, memory.New())
	creator := e.App(b, tokenvault.Private, "token:create")
	b.ReportAllocs()
	for b.Loop() {
		body := map[string]any{"type": "card", "data": map[string]any{
			"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}}
		if _, err := e.V.Tokenize(ctx, creator.Key, body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInvokeReactorDecode invokes a reactor that echoes its
// arguments, and one that tokenizes a card through req.client once.
func BenchmarkInvokeReactorDecode(b *testing.B) {
	codes := []struct{ name, code string }{
		{"echo", `module.exports = async function (req) { return {raw: req.args} }`},
		{"client-tokenize", `module.exports = async function (req) { return {raw: req.client.tokenize(req.args.card)} }`},
	}
	for _, inProcess := range []bool{false, true} {
		for _, c := range codes {
			b.Run(fmt.Sprintf("inprocess=%v/%s", inProcess, c.name), func(b *testing.B) {
				e := vaulttest.NewEnvOn(b, memory.New(), func(o *tokenvault.Options) { o.Code.TrustedInProcess = inProcess })
				app := e.App(b, tokenvault.Private, "token:create")
				r, err := e.V.CreateReactor(ctx, e.Mgmt, tokenvault.CreateReactorRequest{Name: "r", Code: c.code,
					Application: &tokenvault.Ref{ID: app.ID}})
				if err != nil {
					b.Fatal(err)
				}
				key := e.Reader(b, "reveal", "token:use").Key
				args := map[string]any{"amount": 42, "currency": "EUR", "card": map[string]any{"type": "card", "data": map[string]any{
					"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2031, "cvc": "123"}}}
				req := tokenvault.InvokeReactorRequest{Args: args}
				if _, err := e.V.InvokeReactor(ctx, key, r.ID, req); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.V.InvokeReactor(ctx, key, r.ID, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
