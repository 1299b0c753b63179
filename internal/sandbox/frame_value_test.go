package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os/exec"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/jsrt"
)

// recordingClient is req.client on the host, keeping the bodies it gets.
type recordingClient struct{ bodies []any }

func (c *recordingClient) Tokenize(_ context.Context, body any) (any, error) {
	c.bodies = append(c.bodies, body)
	return map[string]any{"n": "tok_1"}, nil
}
func (c *recordingClient) Detokenize(context.Context, any) (any, error)  { return nil, nil }
func (c *recordingClient) GetToken(context.Context, string) (any, error) { return nil, nil }
func (c *recordingClient) DeleteToken(context.Context, string) error     { return nil }
func (c *recordingClient) GetTokenIntent(context.Context, string) (any, error) {
	return nil, nil
}
func (c *recordingClient) DeleteTokenIntent(context.Context, string) error { return nil }

// The code's req, a host call's argument and answer, and the result each
// cross the pipe once as their own JSON, after the frame's message and a
// newline: never a JSON string inside JSON (which escapes every quote, and
// which each side decoded twice). The host gives the call's argument to
// req.client as the worker wrote it, undecoded.
func TestValuesCrossThePipeOnce(t *testing.T) {
	toWorker, fromHost := io.Pipe()
	toHost, fromWorker := io.Pipe()
	w := &process{cmd: &exec.Cmd{}, stdin: fromHost, w: bufio.NewWriter(fromHost), r: bufio.NewReader(toHost),
		exited: make(chan struct{}), known: map[string]bool{}, maxFrame: 1 << 20}
	s := &Sandbox{opts: Options{Logger: slog.New(slog.DiscardHandler), MaxResultBytes: 1 << 20, MemoryBytes: DefaultMemoryBytes}}
	client := &recordingClient{}
	inv := Invocation{Tenant: "t", Code: "module.exports = f", Req: map[string]any{"args": map[string]any{"quote": `a"b`}},
		Host: jsrt.Host{Client: client}}
	reqJSON, _ := json.Marshal(inv.Req)
	arg := []byte(`{"n":"4242 \"4242\""}`)

	worker := make(chan error, 1)
	go func() {
		worker <- func() error {
			in, out := bufio.NewReader(toWorker), bufio.NewWriter(fromWorker)
			typ, body, err := readFrame(in, 1<<20)
			if err != nil || typ != frameRun {
				return err
			}
			var req runRequest
			value, err := splitValue(body, &req)
			if err != nil || !bytes.Equal(value, reqJSON) || bytes.Contains(body[:len(body)-len(value)], []byte("args")) {
				t.Errorf("run frame = %s, want its message, a newline and %s", body, reqJSON)
			}
			if err := writeValueFrame(out, frameCall, hostCall{Method: "tokenize"}, arg); err != nil {
				return err
			}
			if typ, body, err = readFrame(in, 1<<20); err != nil || typ != frameReply {
				return err
			}
			var rep callReply
			if value, err = splitValue(body, &rep); err != nil || string(value) != `{"n":"tok_1"}` || rep.Error != "" {
				t.Errorf("reply frame = %s, want its message, a newline and the answer's JSON", body)
			}
			return writeValueFrame(out, frameResult, runResult{}, []byte(`{"raw":{"n":"tok_1"}}`))
		}()
	}()
	out, healthy, err := s.runOn(context.Background(), w, inv, time.Now().Add(10*time.Second), 10*time.Second)
	if werr := <-worker; werr != nil {
		t.Fatalf("the fake worker: %v", werr)
	}
	if err != nil || !healthy {
		t.Fatalf("runOn = %v, %v, %v", out, healthy, err)
	}
	if raw := out.(map[string]any)["raw"].(map[string]any); raw["n"] != "tok_1" {
		t.Errorf("result = %v", out)
	}
	if len(client.bodies) != 1 {
		t.Fatalf("req.client got %d calls", len(client.bodies))
	}
	if got, ok := client.bodies[0].(json.RawMessage); !ok || !bytes.Equal(got, arg) {
		t.Errorf("req.client.tokenize got %#v, want the worker's JSON as it came", client.bodies[0])
	}
}
