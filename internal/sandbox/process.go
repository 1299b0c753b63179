package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// startTimeout bounds a worker's start, up to its ready frame.
const startTimeout = 30 * time.Second

// process is one worker process, seen from the Vault. It is used by one
// invocation at a time.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	w      *bufio.Writer
	r      *bufio.Reader
	stderr *headBuffer
	exited chan struct{} // closed once the process has exited and stderr is read

	killedBy atomic.Int32 // the stopCause of a kill by the Vault, 0 if none

	known   map[string]bool // code hashes the worker has compiled since its last Forget
	cpu     float64         // CPU seconds used, from its last result
	large   bool            // its last run was large: retire it (pool.put)
	idleAt  time.Time
	seccomp bool
	// maxFrame bounds every frame read from the worker, which is
	// untrusted: initLimits.MaxFrameBytes.
	maxFrame int
}

// executable is the program workers run: this program. On Linux
// /proc/self/exe names the running binary even when the file it came from
// has since been replaced (an upgrade in place), so workers always speak
// this Vault's protocol.
func executable() (string, error) {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// startProcess starts a worker and sends it its limits.
func startProcess(lim initLimits) (*process, error) {
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: finding the executable: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{workerEnv + "=" + workerMarker} // and nothing else of the Vault's environment
	cmd.Dir = "/"
	workerAttrs(cmd)
	p := &process{cmd: cmd, stderr: &headBuffer{max: 8 << 10}, exited: make(chan struct{}), known: map[string]bool{}, maxFrame: int(lim.MaxFrameBytes)}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: starting a worker: %w", err)
	}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	p.w = bufio.NewWriterSize(p.stdin, 64<<10)
	p.r = bufio.NewReaderSize(stdout, 64<<10)

	t := time.AfterFunc(startTimeout, func() { p.kill(stopStart) })
	defer t.Stop()
	var ready readyMessage
	err = writeFrame(p.w, frameInit, lim)
	if err == nil {
		err = p.expect(frameReady, &ready)
	}
	if err == nil && ready.Error != "" {
		err = errors.New(ready.Error)
	}
	if err != nil {
		p.kill(stopStart)
		return nil, fmt.Errorf("sandbox: a worker did not start: %w%s", err, p.crashLine())
	}
	p.seccomp = ready.Seccomp
	return p, nil
}

// expect reads one frame, which must be of type typ, into v.
func (p *process) expect(typ byte, v any) error {
	got, body, err := readFrame(p.r, p.maxFrame)
	if err != nil {
		return err
	}
	if got != typ {
		return fmt.Errorf("sandbox: a worker sent frame %q, expected %q", got, typ)
	}
	return json.Unmarshal(body, v)
}

// kill ends the process for cause (the first cause wins) and waits for it.
func (p *process) kill(cause stopCause) {
	p.killedBy.CompareAndSwap(0, int32(cause))
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
	p.stdin.Close()
	<-p.exited
}

// retire closes the worker's input, so that it exits on its own, and kills
// it if it has not within a second.
func (p *process) retire() {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(time.Second):
		p.kill(stopRetired)
	}
}

// died classifies why the process ended; it waits for the exit first (a
// broken pipe can precede it by a moment), killing a process that lingers.
func (p *process) died() stopCause {
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
		p.kill(stopCrashed)
	}
	if c := stopCause(p.killedBy.Load()); c != 0 {
		return c
	}
	head := p.stderr.Bytes()
	switch {
	case bytes.Contains(head, []byte("out of memory")), bytes.Contains(head, []byte("cannot allocate memory")):
		return stopMemory
	case bytes.Contains(head, []byte("stack overflow")), bytes.Contains(head, []byte("stack exceeds")):
		return stopStack
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		switch ws.Signal() {
		case syscall.SIGKILL, syscall.SIGXCPU:
			// Nobody in the Vault sent it: the kernel, for RLIMIT_CPU (or
			// its out-of-memory killer).
			return stopCPU
		}
	}
	return stopCrashed
}

// crashLine is the exit status and the Go runtime's "fatal error" line
// from the worker's standard error, for the host's log: never a panic's
// message or the goroutine dump, which may hold values of the code.
func (p *process) crashLine() string {
	state := ""
	if ps := p.cmd.ProcessState; ps != nil {
		state = ps.String()
	}
	for _, line := range bytes.Split(p.stderr.Bytes(), []byte("\n")) {
		if bytes.HasPrefix(line, []byte("fatal error:")) || bytes.HasPrefix(line, []byte("sandbox worker:")) {
			return " (" + state + "; " + string(line) + ")"
		}
	}
	return " (" + state + ")"
}

// headBuffer keeps the first max bytes written to it: a Go runtime crash
// names its cause on the first lines.
type headBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (h *headBuffer) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.buf); room > 0 {
		h.buf = append(h.buf, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

func (h *headBuffer) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return bytes.Clone(h.buf)
}
