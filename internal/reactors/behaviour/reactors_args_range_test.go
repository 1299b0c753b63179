package reactors_test

import (
	"encoding/json"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestInvokeReactorNumberOutOfRange: a number parameter holding a number
// no JavaScript number can hold (1e400, -1e400, or "1e400" as a string)
// is Invalid, naming it; the code never receives it as text or Infinity.
func TestInvokeReactorNumberOutOfRange(t *testing.T) {
	e := vaulttest.NewEnv(t)
	f := e.Formula(t, tokenvault.FormulaRequest{RequestParameters: []tokenvault.RequestParameter{
		{Name: "n", Type: "number"}, {Name: "a.b", Type: "number", Optional: true},
	}})
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{}})
	user := e.User(t)
	for _, args := range []string{
		`{"n": 1e400}`, `{"n": -1e400}`, `{"n": "1e400"}`, `{"n": " -1E+400 "}`, `{"n": 1, "a": {"b": 2e308}}`,
	} {
		_, err := e.V.InvokeReactor(ctx, user, r.ID, tokenvault.InvokeReactorRequest{Args: json.RawMessage(args)})
		want := "args.n"
		if args == `{"n": 1, "a": {"b": 2e308}}` {
			want = "args.a.b"
		}
		vaulttest.WantField(t, err, want)
	}
	// In range, however written, a number passes.
	for args, want := range map[string]float64{`{"n": 1.7e308}`: 1.7e308, `{"n": "-1e-400"}`: 0, `{"n": 12}`: 12} {
		out, err := e.V.InvokeReactor(ctx, user, r.ID, tokenvault.InvokeReactorRequest{Args: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("InvokeReactor(%s): %v", args, err)
		}
		got := vaulttest.RoundTrip(t, out.Raw).(map[string]any)["args"].(map[string]any)["n"]
		if got != want {
			t.Errorf("InvokeReactor(%s): the code received %v, want %v", args, got, want)
		}
	}
}

// TestInvokeReactorNumberOutOfRangeUndeclared: without request parameters
// the arguments pass as sent, but a number the code cannot receive is a
// 400 naming it, not a failure of the code (a 500).
func TestInvokeReactorNumberOutOfRangeUndeclared(t *testing.T) {
	e := vaulttest.NewEnv(t)
	r := e.Reactor(t, tokenvault.CreateReactorRequest{Code: vaulttest.EchoCode, Configuration: map[string]any{}})
	user := e.User(t)
	_, err := e.V.InvokeReactor(ctx, user, r.ID, tokenvault.InvokeReactorRequest{Args: json.RawMessage(`{"a": [1, {"n": -1e400}]}`)})
	vaulttest.WantField(t, err, "args.a[1].n")
	out, err := e.V.InvokeReactor(ctx, user, r.ID, tokenvault.InvokeReactorRequest{Args: json.RawMessage(`{"n": "1e400", "m": 1e300}`)})
	if err != nil {
		t.Fatalf("InvokeReactor with a string and an in-range number: %v", err)
	}
	args := vaulttest.RoundTrip(t, out.Raw).(map[string]any)["args"].(map[string]any)
	if args["n"] != "1e400" || args["m"] != 1e300 {
		t.Errorf("args = %v, want them as sent", args)
	}
}
