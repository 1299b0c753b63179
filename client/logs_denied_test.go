package client_test

import (
	"context"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// TestListLogsFiltersThroughTheClient: a denied call's line is found by
// outcome, operation and actor through the client as in process.
func TestListLogsFiltersThroughTheClient(t *testing.T) {
	p, ctx := newParity(t), context.Background()
	if _, err := p.c.ListLogs(ctx, p.user, tokenvault.ListLogsRequest{}); err == nil {
		t.Fatal("ListLogs with a key without log:read succeeded")
	}
	in, err := p.v.ListLogs(ctx, p.mgmt, tokenvault.ListLogsRequest{Outcome: tokenvault.OutcomeDenied})
	if err != nil || len(in.Data) != 1 {
		t.Fatalf("ListLogs(outcome=denied) in process = %+v, %v; want one line", in, err)
	}
	for _, req := range []tokenvault.ListLogsRequest{
		{Outcome: tokenvault.OutcomeDenied},
		{Operation: tokenvault.OpDenied},
		{ActorID: in.Data[0].ActorID, Outcome: tokenvault.OutcomeDenied},
	} {
		got, err := p.c.ListLogs(ctx, p.mgmt, req)
		if err != nil || len(got.Data) != 1 || got.Data[0].ID != in.Data[0].ID || got.Data[0].Outcome != tokenvault.OutcomeDenied {
			t.Errorf("client ListLogs(%+v) = %+v, %v; want the denied line %s", req, got, err, in.Data[0].ID)
		}
	}
	if _, err := p.c.ListLogs(ctx, p.mgmt, tokenvault.ListLogsRequest{Outcome: "maybe"}); tokenvault.ErrorKind(err) != tokenvault.Invalid {
		t.Errorf("client ListLogs(outcome=maybe) = %v, want Invalid", err)
	}
}
