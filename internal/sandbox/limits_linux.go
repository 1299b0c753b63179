package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// asSlack is the address space a worker may reserve beyond twice its
// memory limit: two of the Go runtime's 64 MiB heap arenas.
const asSlack = 128 << 20

// applyLimits bounds the worker before it reads any code: memory
// (RLIMIT_DATA), CPU time (RLIMIT_CPU), no core dumps (they would write
// tenant data to disk), no files written, and a seccomp filter that refuses
// new processes, opening files and sockets. It reports whether the filter
// is in force. The process's own mappings at this point (the Go runtime,
// and the race detector's shadow in race builds) are not charged to the
// memory limit: it is counted from what is mapped now.
func applyLimits(l initLimits) (seccompOn bool, err error) {
	base, err := statusBytes("VmData:")
	if err != nil {
		return false, fmt.Errorf("reading the worker's memory use: %w", err)
	}
	baseAS, err := statusBytes("VmSize:")
	if err != nil {
		return false, fmt.Errorf("reading the worker's memory use: %w", err)
	}
	mem := l.MemoryBytes * raceMemoryFactor
	setMemoryTarget(mem)
	for _, r := range []struct {
		name     string
		resource int
		value    uint64
	}{
		{"RLIMIT_DATA", unix.RLIMIT_DATA, base + uint64(mem)},
		// RLIMIT_DATA is not enough on its own: the kernel does not always
		// charge a writable mapping made over address space the Go runtime
		// had reserved (PROT_NONE), and a worker was seen to allocate a
		// 1.5 GB string under a 64 MiB limit. The address-space limit
		// counts reservations too; it has room for the runtime's own
		// reservations, which come in 64 MiB heap arenas.
		{"RLIMIT_AS", unix.RLIMIT_AS, baseAS + 2*uint64(mem) + asSlack},
		{"RLIMIT_CPU", unix.RLIMIT_CPU, uint64(l.CPUSeconds)},
		{"RLIMIT_CORE", unix.RLIMIT_CORE, 0},
		{"RLIMIT_FSIZE", unix.RLIMIT_FSIZE, 0},
	} {
		lim := unix.Rlimit{Cur: r.value, Max: r.value}
		if err := unix.Setrlimit(r.resource, &lim); err != nil {
			return false, fmt.Errorf("setting %s: %w", r.name, err)
		}
	}
	if err := seccomp.LoadFilter(workerFilter()); err != nil {
		return false, fmt.Errorf("loading the seccomp filter: %w", err)
	}
	return true, nil
}

// workerFilter refuses (EPERM) the system calls a worker never needs and
// tenant code must never reach: starting processes, opening files,
// creating sockets, and changing its own limits or other processes. It is a
// deny list rather than an allow list so that the Go runtime (whose needs
// vary between versions and with the race detector) keeps working; what it
// refuses is everything that reaches outside the process. Threads are still
// allowed: clone is refused only without CLONE_THREAD.
func workerFilter() seccomp.Filter {
	deny := []string{
		"execve", "execveat", "fork", "vfork",
		"open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
		"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
		"link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "rename", "renameat", "renameat2",
		"mkdir", "mkdirat", "rmdir", "mknod", "mknodat", "chmod", "fchmod", "fchmodat", "chown", "fchown", "fchownat", "lchown",
		"truncate", "ftruncate", "chdir", "fchdir", "chroot", "pivot_root", "mount", "umount2",
		"setrlimit", "prlimit64", "setpriority", "ptrace", "process_vm_readv", "process_vm_writev",
		"kexec_load", "init_module", "finit_module", "delete_module", "bpf", "perf_event_open",
		"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "unshare", "setns",
		"userfaultfd", "io_uring_setup", "memfd_create", "keyctl", "add_key", "request_key",
	}
	return seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync, // every thread of the runtime, not only this one
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{
				{Action: seccomp.ActionErrno, Names: deny},
				{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{{
					Name:       "clone",
					Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.BitsNotSet, Value: unix.CLONE_THREAD}},
				}}},
				// clone3 passes its flags in memory, where a filter cannot
				// look. ENOSYS (not EPERM) makes callers fall back to
				// clone: glibc's pthread_create does, in cgo builds.
				{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
			},
		},
	}
}

// statusBytes is a size field of /proc/self/status, such as VmData (what
// RLIMIT_DATA counts) or VmSize (what RLIMIT_AS counts).
func statusBytes(field string) (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no " + field + " in /proc/self/status")
}

// closeInherited closes every descriptor above standard error that the
// worker inherited: a host started from a shell or a supervisor may hold
// descriptors without close-on-exec, which exec passes on. The Go
// runtime's own (epoll and its eventfd) stay.
func closeInherited() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]" {
			continue // the directory being read is gone already, or the runtime's
		}
		unix.Close(fd)
	}
}

// openDescriptors lists the worker's open file descriptors, for the fds
// probe (read before the filter forbids opening /proc).
func openDescriptors() string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err.Error()
	}
	fds := make([]int, 0, len(ents))
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			fds = append(fds, n)
		}
	}
	sort.Ints(fds)
	parts := make([]string, len(fds))
	for i, fd := range fds {
		target, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		parts[i] = strconv.Itoa(fd) + "=" + kindOf(target)
	}
	return strings.Join(parts, " ")
}

// kindOf names what a descriptor points at without the host's paths.
func kindOf(target string) string {
	switch {
	case target == "":
		return "gone" // the directory being listed, closed by now
	case strings.HasPrefix(target, "pipe:"):
		return "pipe"
	case strings.HasPrefix(target, "anon_inode:"):
		return strings.TrimPrefix(target, "anon_inode:")
	case strings.HasPrefix(target, "socket:"):
		return "socket"
	case target == os.DevNull:
		return "null"
	case strings.HasPrefix(target, "/proc/"):
		return "proc" // the directory being listed
	}
	return "file"
}

// reserveStdout moves the frame stream off descriptor 1: the worker keeps a
// duplicate for frames and points 1 at standard error, so nothing written
// to standard output by mistake can corrupt the protocol.
func reserveStdout() (*os.File, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("duplicating standard output: %w", err)
	}
	if err := unix.Dup3(2, 1, 0); err != nil {
		return nil, fmt.Errorf("redirecting standard output: %w", err)
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "frames"), nil
}

// cpuSeconds is the CPU time the worker has used.
func cpuSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// workerAttrs makes a worker die with the Vault's process (no orphan keeps
// running tenant code) and puts it in its own process group.
func workerAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// probe tries one forbidden thing from inside the worker (tests only).
func (w *worker) probe(body []byte) error {
	var req probeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	var res probeResult
	fail := func(err error) {
		if err != nil {
			res.Error = err.Error()
		}
	}
	switch req.What {
	case "open":
		f, err := os.Open("/etc/hostname")
		if err == nil {
			f.Close()
		}
		fail(err)
	case "create":
		f, err := os.CreateTemp("", "sandbox-probe")
		if err == nil {
			f.Close()
			os.Remove(f.Name())
		}
		fail(err)
	case "socket":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		fail(err)
	case "exec":
		fail(exec.Command("/bin/true").Run())
	case "env":
		res.Detail = strings.Join(os.Environ(), "\n")
	case "fds":
		res.Detail = w.fds
	case "rlimits":
		var parts []string
		for _, r := range []struct {
			name     string
			resource int
		}{{"data", unix.RLIMIT_DATA}, {"as", unix.RLIMIT_AS}, {"cpu", unix.RLIMIT_CPU}, {"core", unix.RLIMIT_CORE}, {"fsize", unix.RLIMIT_FSIZE}} {
			var lim unix.Rlimit
			unix.Getrlimit(r.resource, &lim)
			parts = append(parts, fmt.Sprintf("%s=%d", r.name, lim.Max))
		}
		res.Detail = strings.Join(parts, " ")
	case "raise-limit":
		lim := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
		fail(unix.Setrlimit(unix.RLIMIT_CPU, &lim))
	case "huge-frame":
		// A frame that claims 2 GiB: the Vault must refuse it from its
		// header, without allocating.
		w.outMu.Lock()
		defer w.outMu.Unlock()
		w.out.Write([]byte{0x7f, 0xff, 0xff, 0xff, frameProbed, '{', '}'})
		return w.out.Flush()
	default:
		res.Error = "unknown probe"
	}
	return w.send(frameProbed, res)
}
