package cli

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/client"
)

// chainKills is the number of kill -9 rounds of TestAuditChainSurvivesKill.
const chainKills = 3

// TestAuditChainSurvivesKill: the server takes the crash tests' load (16
// workers tokenizing and reading each token back: reads are appended to
// bbolt's append log and chained after their fold) and is killed with
// SIGKILL chainKills times, restarting on the same data each time. Then
// the operator signs the tenant's head and verifies its chain over HTTP
// (POST /operator/tenants/{id}/audit/verify): no problem, the chain runs
// from 1, and it holds at least a line for every acknowledged creation and
// read.
func TestAuditChainSurvivesKill(t *testing.T) {
	if os.Getenv("TOKENVAULT_CRASH_TEST") != "1" {
		t.Skip("kills a server subprocess 3 times; run it with TOKENVAULT_CRASH_TEST=1 go test -run TestAuditChainSurvivesKill ./internal/cli")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := buildServer(t)
	data := filepath.Join(dir, "data")
	srv := startProcess(t, bin, data)
	mgmt := readManagementKey(t, data)
	key := createRevealApp(t, srv.addr, mgmt)
	acks, reads := 0, 0
	for round := 1; round <= chainKills; round++ {
		load := startLoad(srv.addr, key, 16)
		deadline := time.Now().Add(10 * time.Second)
		for load.count() < 10 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(500*time.Millisecond + rand.N(time.Second))
		srv.kill(t)
		res := load.stop()
		if len(res.acked) == 0 {
			t.Errorf("round %d: no request was acknowledged before the kill", round)
		}
		acks += len(res.acked)
		for _, n := range res.reads {
			reads += n
		}
		srv = startProcess(t, bin, data)
		t.Logf("round %d: %d tokens acknowledged, %d reads", round, len(res.acked), len(res.reads))
	}

	b, err := os.ReadFile(filepath.Join(data, "operator.key"))
	if err != nil {
		t.Fatal(err)
	}
	op := tokenvault.Credential(strings.TrimSpace(string(b)))
	ctx := context.Background()
	c := client.New("http://"+srv.addr, nil)
	tenants, err := c.ListTenants(ctx, op, tokenvault.PageRequest{})
	if err != nil || len(tenants.Data) != 1 {
		t.Fatalf("ListTenants = %+v, %v; want the one tenant", tenants, err)
	}
	tid := tenants.Data[0].ID
	if _, err := c.SignAuditChain(ctx, op, tid); err != nil {
		t.Fatal(err)
	}
	rep, err := c.VerifyAuditChain(ctx, op, tid)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range rep.Problems {
		// Lines chained after the signature (the verification's own
		// fold may chain reads the restart left) are only unsigned.
		if p.Kind != auditchain.UnsignedTail && i < 10 {
			t.Errorf("after %d kills: %v", chainKills, p)
		}
	}
	if rep.FirstSeq != 1 || rep.Lines < acks+reads || rep.LastSeq != uint64(rep.Lines) {
		t.Errorf("chain %d..%d, %d lines; want from 1, with at least the %d acknowledged creations and %d reads", rep.FirstSeq, rep.LastSeq, rep.Lines, acks, reads)
	}
	t.Logf("%d kills: %d creations and %d reads acknowledged; chain 1..%d verifies (%d checkpoints, signed through %d)",
		chainKills, acks, reads, rep.LastSeq, rep.Checkpoints, rep.SignedThrough)
	srv.terminate(t)
}
