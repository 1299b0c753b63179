package vaulttest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tokenvault/tokenvault/store"
)

// A recording store: what the commits of marked calls write.
//
// The write path's rule (DESIGN.md, Writes) is about keys: a commit writes
// what belongs to the records it changes and rows only its own instance
// writes, never a row that a commit of the same tenant on another instance
// also writes. A recordingStore wraps the store beneath one Vault and
// records, for every Update whose context carries the mark (markWrites),
// the keys its function Put and Deleted in the run that committed. The
// Vault passes a call's context (with its CallInfo added, which keeps the
// mark) to the store's Update; background work (the sweeper, the chain
// linker, webhook dispatch) runs under the Vault's own context and is not
// recorded: it is not part of a call's commit.
//
// A store may run the functions of several callers in one transaction
// (group commit) and run them again after a conflict, so the recording
// wraps each function, not the transaction, and keeps only the writes of
// its last run, and only once Update returned nil. Appends
// (store.Appender) of a marked call are recorded too, as commits of their
// own.
//
// The wrapper keeps the optional interfaces of the store it wraps
// (store.SingleProcess, store.Appender, store.Snapshotter, and
// store.Generation on its transactions): hiding one would make the Vault
// behave as on another store.

// markKey is the context key of the mark.
type markKey struct{}

// markWrites marks ctx: the commits of Updates under it are recorded.
func markWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, markKey{}, true)
}

func marked(ctx context.Context) bool {
	m, _ := ctx.Value(markKey{}).(bool)
	return m
}

// commitWrites is what one committed run of a marked Update's function
// wrote, in order, or what one marked Append wrote (appended), and what
// that run read: the keys it got and the ranges its scans covered. On
// PostgreSQL, whose transactions are serializable, a commit that read a
// key another instance's commit writes conflicts with it as surely as
// two writes of one key do.
type commitWrites struct {
	puts, deletes []string
	appended      bool
	gets          []string
	scans         []scanRange
}

// scanRange is the range of keys a scan covered: under prefix, above
// from and up to to (both empty: the whole prefix), for a scan ended by
// its limit or its callback, up to the last key it visited.
type scanRange struct {
	prefix, from, to string
	fromIncl         bool // from is a visited key (a reverse scan's last), not an exclusive bound
	toIncl           bool // to is a visited key, not an exclusive bound (a reverse scan's before)
}

// covers reports whether key is in r.
func (r scanRange) covers(key string) bool {
	if !strings.HasPrefix(key, r.prefix) {
		return false
	}
	if r.from != "" && (key < r.from || key == r.from && !r.fromIncl) {
		return false
	}
	if r.to != "" && (key > r.to || key == r.to && !r.toIncl) {
		return false
	}
	return true
}

// keys is every key the commit wrote (put or deleted), each once.
func (c commitWrites) keys() []string {
	ks := slices.Concat(c.puts, c.deletes)
	slices.Sort(ks)
	return slices.Compact(ks)
}

// recorder collects the commits of one recordingStore.
type recorder struct {
	mu      sync.Mutex
	commits []commitWrites
}

func (r *recorder) add(c commitWrites) {
	r.mu.Lock()
	r.commits = append(r.commits, c)
	r.mu.Unlock()
}

// Commits returns the commits recorded so far.
func (r *recorder) Commits() []commitWrites {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.commits)
}

// Take returns the commits recorded so far and forgets them.
func (r *recorder) Take() []commitWrites {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.commits
	r.commits = nil
	return c
}

// recordingStore is the wrapper; recordStore builds it with the optional
// interfaces of the store it wraps.
type recordingStore struct {
	store.Store // View and Close as they are
	rec         *recorder
}

// Update records the last run of fn when ctx is marked and Update commits.
func (s *recordingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if !marked(ctx) {
		return s.Store.Update(ctx, fn)
	}
	// The store runs fn on its own goroutine perhaps, but never two runs
	// of one Update at once, and returns after the last.
	var last *commitWrites
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		w := new(commitWrites)
		last = w
		return fn(recordingTx(tx, w))
	})
	if err == nil && last != nil && len(last.puts)+len(last.deletes) > 0 {
		s.rec.add(*last)
	}
	return err
}

// recTx records the writes of one run.
type recTx struct {
	store.Tx
	w *commitWrites
}

func (t *recTx) Put(key, value []byte) error {
	if err := t.Tx.Put(key, value); err != nil {
		return err
	}
	t.w.puts = append(t.w.puts, string(key))
	return nil
}

func (t *recTx) Delete(key []byte) error {
	if err := t.Tx.Delete(key); err != nil {
		return err
	}
	t.w.deletes = append(t.w.deletes, string(key))
	return nil
}

func (t *recTx) Get(key []byte) ([]byte, error) {
	t.w.gets = append(t.w.gets, string(key))
	return t.Tx.Get(key)
}

// Scan records the range it covered: above after, up to the last key
// visited when the limit or fn ended it, else to the prefix's end.
func (t *recTx) Scan(prefix, after []byte, limit int, fn func(key, value []byte) error) error {
	var last string
	visited, stopped := 0, false
	err := t.Tx.Scan(prefix, after, limit, func(k, v []byte) error {
		last, visited = string(k), visited+1
		err := fn(k, v)
		stopped = err != nil
		return err
	})
	r := scanRange{prefix: string(prefix), from: string(after)}
	if stopped || limit > 0 && visited >= limit {
		r.to, r.toIncl = last, true
	}
	t.w.scans = append(t.w.scans, r)
	return err
}

// ScanReverse is Scan downwards: below before, down to the last key
// visited when the limit or fn ended it.
func (t *recTx) ScanReverse(prefix, before []byte, limit int, fn func(key, value []byte) error) error {
	var last string
	visited, stopped := 0, false
	err := t.Tx.ScanReverse(prefix, before, limit, func(k, v []byte) error {
		last, visited = string(k), visited+1
		err := fn(k, v)
		stopped = err != nil
		return err
	})
	r := scanRange{prefix: string(prefix), to: string(before)}
	if stopped || limit > 0 && visited >= limit {
		r.from, r.fromIncl = last, true
	}
	t.w.scans = append(t.w.scans, r)
	return err
}

// reads reports whether the commit read key: got it, or scanned a range
// holding it.
func (c commitWrites) reads(key string) bool {
	if slices.Contains(c.gets, key) {
		return true
	}
	for _, r := range c.scans {
		if r.covers(key) {
			return true
		}
	}
	return false
}

// recordingTx wraps tx, keeping its store.Generation and store.PreCommit.
func recordingTx(tx store.Tx, w *commitWrites) store.Tx {
	rt := &recTx{Tx: tx, w: w}
	g, gen := tx.(store.Generation)
	pc, pre := tx.(store.PreCommit)
	switch {
	case gen && pre:
		return &recGenPreTx{&recGenTx{rt, g}, pc}
	case gen:
		return &recGenTx{rt, g}
	case pre:
		return &recPreTx{rt, pc}
	}
	return rt
}

// recGenTx is a recTx whose transaction keeps a generation. (An embedded
// store.Generation would not do: the field, named Generation, hides the
// method of the same name.)
type recGenTx struct {
	*recTx
	g store.Generation
}

func (t *recGenTx) Generation() (uint64, bool, error) { return t.g.Generation() }
func (t *recGenTx) AdvanceGeneration() error          { return t.g.AdvanceGeneration() }

// recPreTx is a recTx whose transaction takes pre-commit parts: they are
// written by the store once for its whole transaction, rows named by the
// writing instance, so they are not recorded as the commit's own.
type recPreTx struct {
	*recTx
	pc store.PreCommit
}

func (t *recPreTx) AddPreCommit(w store.PreCommitWrite, part any) error {
	return t.pc.AddPreCommit(w, part)
}

// recGenPreTx is a recGenTx whose transaction takes pre-commit parts.
type recGenPreTx struct {
	*recGenTx
	pc store.PreCommit
}

func (t *recGenPreTx) AddPreCommit(w store.PreCommitWrite, part any) error {
	return t.pc.AddPreCommit(w, part)
}

// recAppender is store.Appender through the recording: a marked Append
// is recorded as a commit of its own.
type recAppender struct {
	ap  store.Appender
	rec *recorder
}

func (a recAppender) Append(ctx context.Context, entries []store.Entry) error {
	if err := a.ap.Append(ctx, entries); err != nil {
		return err
	}
	if marked(ctx) {
		w := commitWrites{appended: true}
		for _, e := range entries {
			w.puts = append(w.puts, string(e.Key))
		}
		a.rec.add(w)
	}
	return nil
}

func (a recAppender) Fold(ctx context.Context) error { return a.ap.Fold(ctx) }

// singleMark carries store.SingleProcess.
type singleMark struct{}

func (singleMark) SingleProcess() {}

// recordStore wraps s, recording into rec, with the optional interfaces s
// implements and no others.
func recordStore(s store.Store, rec *recorder) store.Store {
	r := &recordingStore{Store: s, rec: rec}
	_, single := s.(store.SingleProcess)
	ap, appends := s.(store.Appender)
	sn, snaps := s.(store.Snapshotter)
	ra := recAppender{ap, rec}
	switch {
	case single && appends && snaps:
		return struct {
			*recordingStore
			singleMark
			recAppender
			store.Snapshotter
		}{r, singleMark{}, ra, sn}
	case single && appends:
		return struct {
			*recordingStore
			singleMark
			recAppender
		}{r, singleMark{}, ra}
	case single && snaps:
		return struct {
			*recordingStore
			singleMark
			store.Snapshotter
		}{r, singleMark{}, sn}
	case appends && snaps:
		return struct {
			*recordingStore
			recAppender
			store.Snapshotter
		}{r, ra, sn}
	case single:
		return struct {
			*recordingStore
			singleMark
		}{r, singleMark{}}
	case appends:
		return struct {
			*recordingStore
			recAppender
		}{r, ra}
	case snaps:
		return struct {
			*recordingStore
			store.Snapshotter
		}{r, sn}
	}
	return r
}

// keyShape is what a failure may print of a store key: its fixed words,
// with the tenant id, ids, MACs, times and positions replaced by
// placeholders. Store keys hold no token data (containers and values are
// MAC'd), but a report names families of keys, not records.
func keyShape(key, tid string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		switch {
		case tid != "" && p == tid:
			parts[i] = "{tenant}"
		case p == "":
		case isWord(p):
		default:
			parts[i] = "{" + fmt.Sprint(len(p)) + "}"
		}
	}
	return strings.Join(parts, "/")
}

// isWord reports whether p is a fixed word of the key layout: short,
// lowercase letters, digits after the first letter, '-' and '_', and not
// hex-like (an id or a MAC).
func isWord(p string) bool {
	if len(p) > 24 || p[0] < 'a' || p[0] > 'z' {
		return false
	}
	hexlike := len(p) >= 8
	for _, c := range p {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || c == '-') {
			hexlike = false
		}
	}
	return !hexlike
}
