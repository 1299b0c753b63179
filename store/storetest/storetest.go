// Package storetest is the conformance suite for [store.Store]
// implementations, plus a fault-injecting wrapper for testing code above a
// Store.
//
// A backend's test calls [Run] with a function that opens a fresh, empty
// store. Every test in the suite tolerates an Update fn being run more than
// once, as the contract allows.
//
// This package imports "testing" and must only be imported by tests.
package storetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tokenvault/tokenvault/store"
)

// Run runs the conformance suite against the stores returned by open, as
// subtests of t. open must return a new, empty store on each call; the suite
// closes every store it opens.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	s := &suite{open: open}
	tests := []struct {
		name string
		fn   func(t *testing.T, s *suite)
	}{
		{"GetMissing", testGetMissing},
		{"PutGet", testPutGet},
		{"EmptyValue", testEmptyValue},
		{"EmptyKey", testEmptyKey},
		{"DeleteMissing", testDeleteMissing},
		{"ReadYourWrites", testReadYourWrites},
		{"RollbackOnError", testRollbackOnError},
		{"RollbackOnPanic", testRollbackOnPanic},
		{"WriteInView", testWriteInView},
		{"Aliasing", testAliasing},
		{"ScanCopiesSurviveWrites", testScanCopiesSurviveWrites},
		{"ScanOrder", testScanOrder},
		{"ScanPrefix", testScanPrefix},
		{"ScanAfter", testScanAfter},
		{"ScanLimit", testScanLimit},
		{"ScanStop", testScanStop},
		{"ScanReverse", testScanReverse},
		{"ScanReverseWrites", testScanReverseWrites},
		{"ScanReverseStop", testScanReverseStop},
		{"ScanReverseLarge", testScanReverseLarge},
		{"LargeBatch", testLargeBatch},
		{"Context", testContext},
		{"Closed", testClosed},
		{"CloseWaitsForTx", testCloseWaitsForTx},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentReadersWriters", testConcurrentReadersWriters},
		{"ConcurrentFailures", testConcurrentFailures},
		{"Append", testAppend},
		{"AppendClosed", testAppendClosed},
		{"PreCommitAlone", testPreCommitAlone},
		{"PreCommitConcurrent", testPreCommitConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, s) })
	}
}

type suite struct {
	open func(t *testing.T) store.Store
}

// fresh opens a new store that is closed when t ends.
func (su *suite) fresh(t *testing.T) store.Store {
	t.Helper()
	s := su.open(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return s
}

// kv is one key-value pair, as strings so that diffs are readable.
type kv struct{ K, V string }

func update(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatalf("Update() = %v, want nil", err)
	}
}

func view(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.View(t.Context(), fn); err != nil {
		t.Fatalf("View() = %v, want nil", err)
	}
}

// seed writes pairs in one Update.
func seed(t *testing.T, s store.Store, pairs ...kv) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, p := range pairs {
			if err := tx.Put([]byte(p.K), []byte(p.V)); err != nil {
				return err
			}
		}
		return nil
	})
}

// dump returns every pair in the store, in scan order.
func dump(t *testing.T, s store.Store) []kv {
	t.Helper()
	var got []kv
	view(t, s, func(tx store.Tx) error {
		got = scanAll(t, tx, nil, nil, 0)
		return nil
	})
	return got
}

// Helpers that may run inside an Update fn report with Errorf, never Fatalf:
// a backend that coalesces updates may run fn on another goroutine, where
// FailNow must not be called.

// scanAll returns copies of what Scan visits.
func scanAll(t *testing.T, tx store.Tx, prefix, after []byte, limit int) []kv {
	t.Helper()
	var got []kv
	err := tx.Scan(prefix, after, limit, func(k, v []byte) error {
		got = append(got, kv{string(k), string(v)})
		return nil
	})
	if err != nil {
		t.Errorf("Scan(%q, %q, %d) = %v, want nil", prefix, after, limit, err)
	}
	return got
}

// scanKeys is scanAll keeping only the keys.
func scanKeys(t *testing.T, tx store.Tx, prefix, after []byte, limit int) []string {
	t.Helper()
	var keys []string
	for _, p := range scanAll(t, tx, prefix, after, limit) {
		keys = append(keys, p.K)
	}
	return keys
}

// wantGet checks that tx holds want under key; want nil means missing.
func wantGet(t *testing.T, tx store.Tx, key string, want []byte) {
	t.Helper()
	got, err := tx.Get([]byte(key))
	if err != nil {
		t.Errorf("Get(%q) error = %v", key, err)
		return
	}
	if want == nil {
		if got != nil {
			t.Errorf("Get(%q) = %q, want nil (missing)", key, got)
		}
		return
	}
	if got == nil || !bytes.Equal(got, want) {
		t.Errorf("Get(%q) = %q (nil: %t), want %q", key, got, got == nil, want)
	}
}

// wantContents checks the whole store.
func wantContents(t *testing.T, s store.Store, want []kv) {
	t.Helper()
	if diff := cmp.Diff(want, dump(t, s), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("store contents mismatch (-want +got):\n%s", diff)
	}
}

var errSentinel = errors.New("storetest: sentinel")

// wantPairs compares scan results.
func wantPairs(t *testing.T, got, want []kv) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Scan mismatch (-want +got):\n%s", diff)
	}
}

// must reports an unexpected error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("unexpected error: %v", err)
	}
}
