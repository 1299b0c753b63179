package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
)

// TestImportResumesAfterKill runs `tokenvault import` as a real child
// process, kills it (SIGKILL) in the middle of the file, and runs it
// again: at the end every valid line is a token exactly once, the summary
// counts each line once (the batch in flight at the kill counted
// skipped), and the reject file names each bad line once.
func TestImportResumesAfterKill(t *testing.T) {
	bin := buildServer(t)
	v, url, key := importServer(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	writeFile(t, keyFile, string(key))
	const lines = 3000
	var b strings.Builder
	bad := map[int]bool{}
	for i := 1; i <= lines; i++ {
		if i%250 == 0 {
			bad[i] = true
			fmt.Fprintf(&b, `{"id": "k%05d", "type": "token"}`+"\n", i)
			continue
		}
		fmt.Fprintf(&b, `{"id": "k%05d", "type": "token", "data": "value %d"}`+"\n", i, i)
	}
	in := filepath.Join(dir, "in.ndjson")
	writeFile(t, in, b.String())
	args := []string{"import", "-server", url, "-key-file", keyFile, "-batch", "10", in}

	cmd := exec.Command(bin, args...)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Kill it once it has committed a few hundred lines, well before the
	// end: polling the state file it writes after each batch.
	deadline := time.After(60 * time.Second)
	killedAt := int64(0)
	for killedAt == 0 {
		select {
		case err := <-done:
			t.Fatalf("the import ended before it could be killed (%v):\n%s", err, out.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("the import did not reach line 300 in 60 s:\n%s", out.String())
		case <-time.After(2 * time.Millisecond):
		}
		if st, err := readImportState(in + ".import-state"); err == nil && st != nil && st.Line >= 300 {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killedAt = st.Line
		}
	}
	<-done
	if killedAt >= lines {
		t.Fatalf("killed at line %d: not in the middle", killedAt)
	}

	res, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("import again: %v\n%s", err, res)
	}
	var sum importSummary
	if err := json.Unmarshal(res, &sum); err != nil {
		t.Fatalf("import again printed %q: %v", res, err)
	}
	valid := int64(lines - len(bad))
	if sum.Resumed < killedAt || sum.Imported+sum.Skipped != valid || sum.Rejected != int64(len(bad)) {
		t.Errorf("summary after the resume = %+v, want imported+skipped %d, %d rejected, resumed after line >= %d", sum, valid, len(bad), killedAt)
	}
	// Every valid line once, and nothing else.
	seen := map[string]int{}
	page := tokenvault.ListTokensRequest{PageRequest: tokenvault.PageRequest{Size: tokenvault.MaxPageSize}}
	for {
		p, err := v.ListTokens(context.Background(), key, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range p.Data {
			seen[tok.ID]++
		}
		if p.Pagination.After == "" {
			break
		}
		page.Start = p.Pagination.After
	}
	for i := 1; i <= lines; i++ {
		id := fmt.Sprintf("k%05d", i)
		if want := map[bool]int{true: 0, false: 1}[bad[i]]; seen[id] != want {
			t.Errorf("token %s exists %d times, want %d", id, seen[id], want)
		}
	}
	if len(seen) != int(valid) {
		t.Errorf("%d tokens, want %d", len(seen), valid)
	}
	rejects, err := os.ReadFile(in + ".rejects")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 1; i <= lines; i++ {
		if bad[i] {
			fmt.Fprintf(&want, "%d\tdata: is required\n", i)
		}
	}
	if string(rejects) != want.String() {
		t.Errorf("reject file =\n%s\nwant\n%s", rejects, want.String())
	}
}
