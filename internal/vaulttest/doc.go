// Package vaulttest is what the Vault's tests share: a Vault under test
// on a fresh store with its bootstrap tenant ([Env], [NewEnv], [NewEnvOn]),
// the stores every Vault test runs against ([StoreKinds], [ForEachStore],
// PostgreSQL through [OpenPG] when TOKENVAULT_TEST_POSTGRES_DSN is set),
// the helpers that create what a test needs with the bootstrap management
// key (applications, tokens, reactors, proxies, sessions, invitations),
// and the checks tests word alike ([WantKind], [WantField]).
//
// The tests of a feature's public behaviour live in the feature's
// behaviour directory as package <feature>_test (internal/tokens/behaviour,
// internal/events/behaviour ...), and call the Vault through the root
// package's API, as a program would; tests of the whole Vault (security,
// isolation, faults, several instances, the README) are this directory's
// own tests. What a test must see that no public method shows (every
// audit line linked now, the chain as stored, the count folder run at
// once, the event tap) it reaches through the helpers of seam_*.go, built
// on internal/testseam, which the root fills from init: each runs the
// Vault's own code, and none widens the public API.
//
// # What it guarantees
//
// Every helper calls t.Helper and fails its test on an error it does not
// expect; every Vault, store, server and PostgreSQL schema it makes is
// the test's own, closed or dropped by t.Cleanup, so tests of one package
// and of several packages run side by side. A Vault it opens runs on a
// fake clock ([NewClock]) unless a test asks for the real one, with
// sweeps off and loopback destinations allowed.
//
// # What it does not do
//
// It is imported only by tests: no program links it. It imports the root
// package (it sits above it, as internal/openapitest does), so no package
// below the root may import it. It reaches the root's unexported state
// only through internal/testseam, never by a bridge in the root.
package vaulttest
