// Package lease holds background leases: which instance, among those
// sharing a store, does a piece of background work (linking the audit
// chain, sweeping) at a time.
//
// Some background work is done by one instance at a time among those
// sharing a store: linking the audit chain (the root's chain_linker.go), sweeping
// (the root's sweeper.go). Done by every instance at once it would only conflict
// with itself: two linkers extending one chain, two sweepers removing the
// same schedule entries. A lease says which instance does it: a row
// sys/lease/<name> (Record) naming its holder (the instance id), an
// epoch and an expiry. An instance takes a lease that is free, released,
// or expired, with the next epoch; its holder renews it well before it
// expires (Hold, when less than two thirds of its time is left), and
// releases it when the Vault closes, so that another instance takes over
// at once rather than at the expiry.
//
// Holding is checked where it matters, in the transaction that does the
// work (Check): a holder paused past its expiry (a long GC, SIGSTOP)
// while another took the lease finds, in its next transaction, that the
// row names another holder or epoch, and stops before writing anything.
// The expiry is on the Vault's clock (Options.Now); instances whose
// clocks disagree by more than a fraction of the lease's time may hold it
// at once for that long, which costs conflicts (retried by the store)
// and never a wrong result: the work a lease guards is transactional
// either way.
//
// The lease rows are written by background work only, and no call reads
// one.
//
// The package never imports the root: a Lease is given the unit of work
// it runs on, the instance id and the clock (Config).
package lease
