// Package sandbox runs tenant JavaScript (internal/jsrt, on goja) in worker
// processes under operating-system limits, so that no code a tenant saves
// can end, stall or starve the Vault's process or another tenant.
//
// # Workers
//
// A worker is the host's executable started again with
// TOKENVAULT_SANDBOX_WORKER set: this package's init serves the worker
// loop and exits before main. That costs embedding programs nothing (go
// test binaries included) and guarantees that the worker speaks the Vault's
// own protocol; on Linux the worker is /proc/self/exe, the binary running
// even when its file has been replaced since. The alternatives were a
// separate worker binary (which every embedding program would have to
// build, ship and find) and a fork without exec (impossible in a
// multithreaded Go process).
//
// Before it reads any code, a worker clears its environment, closes
// descriptors it inherited, pins GOMAXPROCS to 1 and time.Local to UTC,
// and applies its limits: RLIMIT_DATA at Options.MemoryBytes over what it
// had mapped at that point (the Go runtime's heap is in it; its collector
// is told to keep under three quarters of that), RLIMIT_AS at twice that
// plus 128 MiB over its address space (a writable mapping over address
// space the runtime had reserved is not always charged to RLIMIT_DATA: a
// worker once allocated a 1.5 GB string under a 64 MiB data limit), a goroutine stack cap
// below it, RLIMIT_CPU over its whole life (960 s; the Vault retires a
// worker before a run could reach it), RLIMIT_CORE and RLIMIT_FSIZE at 0,
// and a seccomp filter (github.com/elastic/go-seccomp-bpf, all threads,
// no_new_privs) that refuses with EPERM execve, fork, vfork, clone without
// CLONE_THREAD, open and openat and every call that creates or changes a
// file, socket and connect, setrlimit and prlimit, ptrace, mount and a few
// more (clone3 gets ENOSYS, so that pthread_create falls back to clone).
// The filter is a deny list: the Go runtime's own needs vary between
// versions and with the race detector. A worker that cannot apply a limit
// refuses to start, and the invocation fails.
//
// # Protocol
//
// Frames on the worker's standard input and output: a 4-byte length, a
// type byte, JSON. A frame that carries a value of the code's (req, a host
// call's argument and answer, the result) holds, after its JSON message, a
// newline and the value's own JSON: each value is encoded once and decoded
// once on each side, never JSON inside JSON. The Vault sends the limits, then code to check or a run
// (the code's hash, the code itself only when the worker has not compiled
// it yet, req, the deadline, whether req.client and fetch exist); the
// worker answers console lines and host calls (req.client methods and
// fetch, carried out by the Vault and answered) and then the result. The
// worker holds no key. Frames from a worker are bounded by
// Options.MaxResultBytes (at least 2 MiB, for a host call's argument) and
// 64 KiB of framing, checked from the frame's header before anything is
// allocated; anything unexpected kills it.
//
// # Results
//
// What a run returns (or throws, as a CustomHttpResponseError's body) is
// bounded by Options.MaxResultBytes as JSON, 4 MiB by default: the worker
// answers a larger result with a refusal, the Vault checks again, and the
// run fails with a *TooLargeError naming the bound (eight concurrent 30 MB
// results once took a server from 31 to 633 MB). A worker whose run sent
// or received over 1 MiB, or whose Go runtime holds over 32 MiB (a quarter
// of Options.MemoryBytes if less; a fresh one holds about 6 MiB) after it,
// is retired once it has answered, and the next invocation starts a fresh
// one: idle workers do not keep what a large run took.
//
// # Limits and failures
//
// The code is interrupted at its deadline by the runtime itself (an
// ordinary timeout, after which the worker exits anyway); a worker that has
// not answered 0.5 s after the deadline, or whose caller's context is
// canceled, is killed with SIGKILL. A worker that dies is classified from
// its exit and the first lines of its standard error (which are never
// logged beyond the Go runtime's "fatal error" line): out of memory, stack
// overflow, CPU limit, or a crash. Run returns a *StopError for those
// (see ReasonOf); only that invocation fails, and the next one gets a new
// worker.
//
// # Fairness
//
// Options.Workers bounds the processes (and so the runs) at once;
// Options.PerTenant bounds one tenant's share. An invocation waits for a
// worker within its deadline and then fails with ErrBusy.
//
// Running code cannot be pre-empted, so a queue alone would not bound a
// tenant's wait: two tenants whose slow code held every worker once made a
// third tenant's trivial reactor wait 9.7 s of its 10 s. So the pool has a
// shared part of PerTenant workers, in which a tenant's second and later
// invocations at once run, and a reserve of Workers − PerTenant workers
// that only a tenant with nothing running may take, one invocation each.
// It follows that every worker is busy only when at least
// Workers − PerTenant + 1 tenants are running code: a tenant with nothing
// running starts at once (within the time to start a worker process) while
// fewer other tenants are, whatever their code does; with the defaults, up
// to 8 other tenants. Past that bound, and for a tenant that already runs
// code, the wait is for a run to end (at most its deadline). When a worker
// frees, the waiting invocation whose tenant has the fewest invocations
// running gets it (the oldest among equals), so a tenant that runs little
// goes before one that runs much. A tenant alone may still use PerTenant
// workers; several busy tenants share PerTenant workers beyond their first
// invocations, which is the price of the bound: raise Workers for more.
package sandbox
