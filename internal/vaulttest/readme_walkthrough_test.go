package vaulttest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/clienttest"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// walkthroughMarker is the HTML comment (invisible on GitHub) before each
// shell block of README.md that TestReadmeWalkthroughRuns runs.
const walkthroughMarker = "<!-- walkthrough: run by internal/vaulttest/readme_walkthrough_test.go -->"

// readmeURL is the server address the README's commands use; the test
// puts its own server's in its place.
const readmeURL = "http://127.0.0.1:8080"

// walkthroughPrelude comes before the README's commands: bash stops at the
// first command that fails, and curl (the README's commands call it by its
// name) becomes a function that runs the real curl as it was called, with a
// time limit, and records the status of its answer (from the headers it
// dumps with -D) in $WALKTHROUGH_STATUS, so that the test can tell an HTTP
// error from a success (curl -s exits 0 on both).
const walkthroughPrelude = `set -euo pipefail
curl() {
  local headers status args rc=0
  headers=$(mktemp)
  command curl --max-time 120 -sS -D "$headers" "$@" || rc=$?
  status=$(awk '/^HTTP\//{s=$2} END{print s}' "$headers")
  rm -f "$headers"
  args="$*"
  args=${args//$'\n'/ } # one line per call
  printf '%s %s\n' "${status:-none}" "$args" >>"$WALKTHROUGH_STATUS"
  if ((rc != 0)); then
    echo "curl exited $rc: curl $args" >&2
  fi
  return "$rc"
}
`

// walkthroughScript returns the shell blocks of readme that follow the
// walkthrough marker, joined in order.
func walkthroughScript(t *testing.T, readme string) string {
	t.Helper()
	blocks := regexp.MustCompile("(?s)"+regexp.QuoteMeta(walkthroughMarker)+"\\s*```sh\\n(.*?)```").FindAllStringSubmatch(readme, -1)
	if len(blocks) == 0 {
		t.Fatalf("README.md has no shell block after %q", walkthroughMarker)
	}
	if n := strings.Count(readme, walkthroughMarker); n != len(blocks) {
		t.Fatalf("README.md has %d walkthrough markers but %d of them are followed by a ```sh block", n, len(blocks))
	}
	var script strings.Builder
	for _, b := range blocks {
		script.WriteString(b[1])
	}
	return script.String()
}

// TestReadmeWalkthroughRuns runs the README's walkthrough as a new user
// would paste it: the server binary built from cmd/tokenvault and started
// on a fresh data directory (./data of the script's directory, as
// "go run ./cmd/tokenvault" makes it) and a free port, the built command
// on PATH as tokenvault, and the walkthrough's shell blocks run by bash
// with set -euo pipefail. Every command must succeed and every HTTP answer
// be a 2xx, but for the one error the walkthrough shows on purpose.
func TestReadmeWalkthroughRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the walkthrough builds and starts the server")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the README walkthrough is a bash script")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the README walkthrough calls the server with curl")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: the walkthrough needs the server built")
	}
	// The walkthrough reads a card back with the TypeScript and the
	// Python clients.
	for _, program := range []string{"node", "tsc", "python3"} {
		clienttest.Need(t, program)
	}
	root := vaulttest.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script := walkthroughScript(t, string(readme))
	if !strings.Contains(script, readmeURL) {
		t.Fatalf("the walkthrough does not call %s, the address the test replaces with its server's", readmeURL)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	began := time.Now()
	build := exec.Command(goTool, "build", "-o", filepath.Join(bin, "tokenvault"), "./cmd/tokenvault")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/tokenvault: %v\n%s", err, out)
	}
	t.Logf("built the server in %v", time.Since(began).Round(time.Millisecond))

	work := filepath.Join(dir, "work") // the user's directory: data/ is made in it
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	// The clients' sources, as a clone has them: tsc builds the TypeScript
	// client into clients/typescript/dist of the copy, not of the
	// repository other tests read.
	if err := os.CopyFS(filepath.Join(work, "clients"), os.DirFS(filepath.Join(root, "clients"))); err != nil {
		t.Fatal(err)
	}
	env := walkthroughEnv(bin)
	srv := startWalkthroughServer(t, filepath.Join(bin, "tokenvault"), work, env)

	statusFile := filepath.Join(dir, "status")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", walkthroughPrelude+strings.ReplaceAll(script, readmeURL, srv.url))
	cmd.Dir = work
	cmd.Env = append(env, "TOKENVAULT_SERVER="+srv.url, "WALKTHROUGH_STATUS="+statusFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ran := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("the walkthrough failed: %v\nits output:\n%s\nits errors:\n%s\nthe server's log:\n%s", err, stdout.String(), stderr.String(), srv.log())
	}
	t.Logf("the walkthrough ran in %v", time.Since(ran).Round(time.Millisecond))

	statuses, err := os.ReadFile(statusFile)
	if err != nil {
		t.Fatalf("no HTTP answer recorded: %v", err)
	}
	var answers, failures []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(statuses)), "\n") {
		answers = append(answers, line)
		if !strings.HasPrefix(line, "2") {
			failures = append(failures, line)
		}
		if empty := emptyVariable(line); empty != "" {
			t.Errorf("a call with %s: a variable the walkthrough sets was empty: %s", empty, line)
		}
	}
	// The one error on purpose: a public application asking for token:read.
	if len(failures) != 1 || !strings.HasPrefix(failures[0], "400 ") || !strings.Contains(failures[0], `"name": "Browser"`) {
		t.Errorf("HTTP answers other than 2xx: %q; want exactly the 400 of the Browser application the walkthrough shows (all answers: %q)\noutput:\n%s",
			failures, answers, stdout.String())
	}
	for _, want := range []string{`"permissions[0]"`, `Dear Ada Lovelace`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the walkthrough's output holds no %s:\n%s", want, stdout.String())
		}
	}
	// The card read back in full by Node and by Python, a line each.
	read := 0
	for line := range strings.SplitSeq(stdout.String(), "\n") {
		if line == "4242424242424242" {
			read++
		}
	}
	if n := read; n != 2 {
		t.Errorf("the walkthrough's output has %d lines 4242424242424242, want 2 (Node's and Python's):\n%s", n, stdout.String())
	}
	for _, f := range []string{"vault.backup", "restored/vault.db", "restored/master.key"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Errorf("after the walkthrough: %v", err)
		}
	}
	srv.stop(t)
}

// emptyVariable says what in a recorded curl call (its arguments joined
// by spaces) shows a variable that expanded to nothing: an SVC-API-KEY
// header without a key, a URL whose path ends in a slash, or a query
// parameter without a value. "" when nothing does.
func emptyVariable(call string) string {
	args := strings.Fields(call)
	for i, a := range args {
		switch {
		case a == "SVC-API-KEY:" && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")):
			return "an empty SVC-API-KEY header"
		case strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://"):
			path, query, _ := strings.Cut(a, "?")
			if strings.HasSuffix(path, "/") {
				return "a path ending in a slash (an empty id?)"
			}
			for p := range strings.SplitSeq(query, "&") {
				if strings.HasSuffix(p, "=") {
					return "an empty query parameter " + p
				}
			}
		}
	}
	return ""
}

// walkthroughEnv is the test's environment without its TOKENVAULT_
// settings and proxies (curl to a loopback server must not go through
// one), with bin first on PATH.
func walkthroughEnv(bin string) []string {
	var env []string
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		switch {
		case strings.HasPrefix(name, "TOKENVAULT_"), strings.EqualFold(name, "http_proxy"),
			strings.EqualFold(name, "https_proxy"), strings.EqualFold(name, "all_proxy"), name == "PATH":
			continue
		}
		env = append(env, e)
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_PROXY=*", "no_proxy=*")
}

// walkthroughServer is the server process the walkthrough talks to.
type walkthroughServer struct {
	cmd  *exec.Cmd
	url  string
	out  *syncBuffer
	done chan error
}

func (s *walkthroughServer) log() string { return s.out.String() }

// listeningAddr finds the address in the server's "listening" log line,
// in text or JSON format.
var listeningAddr = regexp.MustCompile(`listening.*?addr"?[=:]"?(https?://[^\s"]+)`)

// startWalkthroughServer starts bin in work as "tokenvault" would be
// started there, on a free loopback port, and waits (up to a minute) until
// it listens and has written data/management.key, which the walkthrough
// reads.
func startWalkthroughServer(t *testing.T, bin, work string, env []string) *walkthroughServer {
	t.Helper()
	s := &walkthroughServer{out: &syncBuffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, "-addr", "127.0.0.1:0")
	s.cmd.Dir = work
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.cmd.Process.Kill() // an error when it has exited
		err := <-s.done
		s.done <- err
	})
	keyFile := filepath.Join(work, "data", "management.key")
	deadline := time.After(time.Minute)
	for {
		if m := listeningAddr.FindStringSubmatch(s.out.String()); m != nil && s.url == "" {
			s.url = m[1]
		}
		if fi, err := os.Stat(keyFile); s.url != "" && err == nil && fi.Size() > 0 {
			return s
		}
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("the server exited at start: %v\n%s", err, s.out)
		case <-deadline:
			t.Fatalf("the server did not listen and write %s within a minute:\n%s", keyFile, s.out)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and expects a clean exit within a minute.
func (s *walkthroughServer) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		if err != nil {
			t.Errorf("the server exited with %v on SIGTERM:\n%s", err, s.out)
		}
	case <-time.After(time.Minute):
		t.Errorf("the server did not exit within a minute of SIGTERM")
	}
}

// TestEmptyVariable: the check that catches a walkthrough variable that
// expanded to nothing (set -u catches only unset ones).
func TestEmptyVariable(t *testing.T) {
	for call, want := range map[string]bool{
		"-s -H SVC-API-KEY: key_abc http://127.0.0.1:1/tokens/01a2":                  false,
		"-s -H SVC-API-KEY: key_abc http://127.0.0.1:1/logs?size=2&start=MThl":       false,
		"-s -H SVC-API-KEY:  -H Content-Type: application/json http://127.0.0.1:1/x": true,
		"-s http://127.0.0.1:1/x -H SVC-API-KEY:":                                    true,
		"-s -H SVC-API-KEY: key_abc http://127.0.0.1:1/tokens/":                      true,
		"-s -H SVC-API-KEY: key_abc http://127.0.0.1:1/logs?size=2&start=":           true,
	} {
		if got := emptyVariable(call) != ""; got != want {
			t.Errorf("emptyVariable(%q) = %q, want an empty variable found: %v", call, emptyVariable(call), want)
		}
	}
}
