// Package testseam lets the Vault's tests outside the root package reach
// the few parts of a Vault that no public method shows: the unit of work
// its features run on, its linker, indexer, count folder and caches.
//
// # Why it exists
//
// A behaviour test of a feature lives beside the feature (package
// <feature>_test) and sees the Vault only through its exported API. Some
// assertions need more: that every audit line is chained (the linker run
// at once rather than on its timer), what a record holds in the store,
// which rows only this instance writes. The root package tells, once, how
// to find a Vault's Internals (Expose); internal/vaulttest builds the
// tests' helpers (LinkNow, WalkChain, PutDeliveryWebhook ...) on them.
//
// # What it does not do
//
// It grows no public API: being internal, only this module's packages can
// import it; the root imports it to say how to find a Vault's parts, and
// only tests' helpers (internal/vaulttest) read them. It holds no logic of its own;
// each field is a method value of the Vault's own parts, so a test through
// the seam runs exactly the code a call would.
package testseam
