package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/storetest"
)

func appendOne(t *testing.T, s *Store, kvs ...string) {
	t.Helper()
	var entries []store.Entry
	for i := 0; i < len(kvs); i += 2 {
		entries = append(entries, store.Entry{Key: []byte(kvs[i]), Value: []byte(kvs[i+1])})
	}
	if err := s.Append(context.Background(), entries); err != nil {
		t.Fatalf("Append() = %v", err)
	}
}

// crashCopy copies the database file and its append log segments, as a
// crash would leave them, to a new directory, and returns the copy's path.
// The store must be idle (no commit in progress).
func crashCopy(t *testing.T, s *Store) string {
	t.Helper()
	dir := t.TempDir()
	names, err := filepath.Glob(s.path + "*")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, filepath.Base(s.path))
}

func segmentFiles(t *testing.T, path string) []uint64 {
	t.Helper()
	seqs, err := segments(path)
	if err != nil {
		t.Fatal(err)
	}
	return seqs
}

// TestAppendSurvivesCrash: entries whose Append returned, not yet folded,
// are in the store when a copy of its files (a crash) is opened; a frame
// cut short at the end of the segment (a write the crash interrupted) is
// left out, and so is what follows it.
func TestAppendSurvivesCrash(t *testing.T) {
	s := openTemp(t, nil)
	defer s.Close()
	// Hold the folder off: a fold takes its turn only after this one.
	s.appends.foldMu.Lock()
	appendOne(t, s, "log/1", "a", "idx/1", "")
	appendOne(t, s, "log/2", "b")
	path := crashCopy(t, s)
	s.appends.foldMu.Unlock()

	seqs := segmentFiles(t, path)
	if len(seqs) != 1 {
		t.Fatalf("segments %v, want one", seqs)
	}
	seg := segmentPath(path, seqs[0])
	whole, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	// A third frame, cut short.
	torn := appendFrame(nil, []store.Entry{{Key: []byte("log/3"), Value: []byte("c")}})
	if err := os.WriteFile(seg, append(bytes.Clone(whole), torn[:len(torn)-1]...), 0o600); err != nil {
		t.Fatal(err)
	}

	c, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open(crash copy) = %v", err)
	}
	want := map[string]string{"log/1": "a", "idx/1": "", "log/2": "b"}
	for k, v := range want {
		if got := storetest.Get(t, c, k); got == nil || string(got) != v {
			t.Errorf("after the crash, %s = %q, want %q", k, got, v)
		}
	}
	if got := storetest.Get(t, c, "log/3"); got != nil {
		t.Errorf("the torn frame's entry is there: %q", got)
	}
	// The left segment is folded and gone; a new one is current.
	if after := segmentFiles(t, path); len(after) != 1 || after[0] != seqs[0]+1 {
		t.Errorf("segments after reopening: %v, want [%d]", after, seqs[0]+1)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if seqs := segmentFiles(t, path); len(seqs) != 0 {
		t.Errorf("segments after Close: %v, want none", seqs)
	}
}

// TestAppendCorruptFrame: a frame whose checksum fails ends what is read
// of its segment.
func TestAppendCorruptFrame(t *testing.T) {
	b := appendFrame(nil, []store.Entry{{Key: []byte("a"), Value: []byte("1")}})
	b = appendFrame(b, []store.Entry{{Key: []byte("b"), Value: []byte("2")}})
	b = appendFrame(b, []store.Entry{{Key: []byte("c"), Value: []byte("3")}})
	first := len(appendFrame(nil, []store.Entry{{Key: []byte("a"), Value: []byte("1")}}))
	b[first+frameHeader+2] ^= 0xff // inside the second frame's payload
	got := readFrames(b)
	if len(got) != 1 || string(got[0].Key) != "a" {
		t.Errorf("readFrames = %q, want the first frame's entry only", got)
	}
	// Zeros (never written) are not a frame.
	if got := readFrames(make([]byte, 64)); len(got) != 0 {
		t.Errorf("readFrames(zeros) = %q", got)
	}
}

// TestAppendClose: Close folds what was appended and removes the log; the
// next Open finds the entries in the file.
func TestAppendClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.appends.foldMu.Lock() // no fold before Close's
	appendOne(t, s, "k", "v")
	s.appends.foldMu.Unlock()
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if seqs := segmentFiles(t, path); len(seqs) != 0 {
		t.Errorf("segments after Close: %v, want none", seqs)
	}
	wantStored(t, path, "k", "v")
}

// wantStored opens the store at path and checks that key holds value.
func wantStored(t *testing.T, path, key, value string) {
	t.Helper()
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := storetest.Get(t, s, key); got == nil || string(got) != value {
		t.Errorf("in %s, %s = %q, want %q", filepath.Base(path), key, got, value)
	}
}

// TestAppendFoldFails: a fold that cannot commit keeps the entries, and a
// later fold writes them.
func TestAppendFoldFails(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	defer s.Close()
	s.appends.foldMu.Lock()
	appendOne(t, s, "k", "v")
	s.appends.foldMu.Unlock()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	failing := s.foldUpdate(done)
	if err := s.appends.fold(failing); !errors.Is(err, context.Canceled) {
		t.Fatalf("fold with a done context = %v, want %v", err, context.Canceled)
	}
	if err := s.Fold(context.Background()); err != nil {
		t.Fatalf("Fold() = %v", err)
	}
	if got := storetest.Get(t, s, "k"); string(got) != "v" {
		t.Errorf("after a failed fold and a good one, k = %q, want v", got)
	}
	s.appends.foldMu.Lock()
	defer s.appends.foldMu.Unlock()
	if len(s.appends.backlog) != 0 {
		t.Errorf("%d segments left in the backlog", len(s.appends.backlog))
	}
}

// TestAppendFailedWrite: after a write of the current segment fails,
// Append fails (the caller then uses Update) until a fold makes a new
// segment current; what was acknowledged before stays.
func TestAppendFailedWrite(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	defer s.Close()
	s.appends.foldMu.Lock()
	appendOne(t, s, "before", "1")
	s.appends.mu.Lock()
	s.appends.seg.Close() // the next write fails
	s.appends.mu.Unlock()
	err := s.Append(context.Background(), []store.Entry{{Key: []byte("failed"), Value: []byte("2")}})
	if err == nil {
		t.Fatal("Append to a closed segment succeeded")
	}
	if err := s.Append(context.Background(), []store.Entry{{Key: []byte("after"), Value: []byte("3")}}); err == nil {
		t.Fatal("Append after a failed write succeeded before a fold")
	}
	s.appends.foldMu.Unlock()
	if err := s.Fold(context.Background()); err != nil {
		t.Fatalf("Fold() = %v", err)
	}
	appendOne(t, s, "healed", "4")
	if err := s.Fold(context.Background()); err != nil {
		t.Fatalf("Fold() = %v", err)
	}
	for k, want := range map[string]string{"before": "1", "healed": "4"} {
		if got := storetest.Get(t, s, k); string(got) != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"failed", "after"} {
		if got := storetest.Get(t, s, k); got != nil {
			t.Errorf("%s, whose Append failed, = %q", k, got)
		}
	}
}

// TestAppendInSnapshot: a snapshot holds what was appended before it
// began.
func TestAppendInSnapshot(t *testing.T) {
	s := openTemp(t, nil)
	defer s.Close()
	s.appends.foldMu.Lock()
	appendOne(t, s, "k", "v")
	s.appends.foldMu.Unlock()
	var buf bytes.Buffer
	if _, err := s.WriteSnapshot(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	wantStored(t, path, "k", "v")
}

// FuzzReadFrames: reading any bytes never panics and gives whole frames
// only; frames written by appendFrame read back as written, whatever
// follows them.
func FuzzReadFrames(f *testing.F) {
	f.Add([]byte("k"), []byte("v"), []byte{})
	f.Add([]byte("log/0000/x"), []byte{}, []byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("a"), []byte("b"), appendFrame(nil, []store.Entry{{Key: []byte("c"), Value: []byte("d")}})[:9])
	f.Fuzz(func(t *testing.T, key, value, tail []byte) {
		readFrames(tail) // any bytes: no panic
		if len(key) == 0 {
			return
		}
		entries := []store.Entry{{Key: key, Value: value}, {Key: append(bytes.Clone(key), 0), Value: nil}}
		b := appendFrame(nil, entries)
		got := readFrames(append(b, tail...))
		if len(got) < 2 {
			t.Fatalf("readFrames lost a whole frame: %q", got)
		}
		norm := func(es []store.Entry) []string {
			var out []string
			for _, e := range es {
				out = append(out, string(e.Key), string(e.Value))
			}
			return out
		}
		if diff := cmp.Diff(norm(entries), norm(got[:2])); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// TestAppendBounded: while maxUnfolded entries wait to be folded (folds
// failing, here held off), Append fails, and works again after a fold.
func TestAppendBounded(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	defer s.Close()
	s.appends.foldMu.Lock()
	many := make([]store.Entry, maxUnfolded)
	for i := range many {
		many[i] = store.Entry{Key: []byte(fmt.Sprintf("k/%06d", i))}
	}
	if err := s.Append(context.Background(), many); err != nil {
		t.Fatalf("Append(%d entries) = %v", len(many), err)
	}
	err := s.Append(context.Background(), []store.Entry{{Key: []byte("one/more")}})
	if !errors.Is(err, errUnfoldedFull) {
		t.Fatalf("Append past the bound = %v, want %v", err, errUnfoldedFull)
	}
	s.appends.foldMu.Unlock()
	if err := s.Fold(context.Background()); err != nil {
		t.Fatal(err)
	}
	appendOne(t, s, "one/more", "")
	if err := s.Fold(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Get(t, s, "one/more"); got == nil {
		t.Error("after a fold, the refused entry could be appended: it is not there")
	}
}

// TestFrameSize: the size the writer reserves for a frame is the frame's,
// across every length of a length's encoding.
func TestFrameSize(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1 << 21} {
		entries := []store.Entry{{Key: bytes.Repeat([]byte{'k'}, n%300+1), Value: make([]byte, n)}, {Key: []byte("k2")}}
		for _, es := range [][]store.Entry{nil, entries[:1], entries} {
			if got, want := frameSize(es), len(appendFrame(nil, es)); got != want {
				t.Errorf("frameSize of %d entries (value %d bytes) = %d, want %d", len(es), n, got, want)
			}
		}
	}
}

// TestAppendReplayKeepsLaterWrites: a crash after a fold committed and
// before its segment was removed leaves the segment for Open to fold
// again; an entry written since the fold (the audit chain writes a line
// again with its link) keeps what was written since, not the appended
// value, while an entry removed since is put again, as before.
func TestAppendReplayKeepsLaterWrites(t *testing.T) {
	s := openTemp(t, nil)
	defer s.Close()
	s.appends.foldMu.Lock()
	appendOne(t, s, "log/1", "unchained", "q/1", "")
	left := crashCopy(t, s) // the segment, as a crash before its removal leaves it
	s.appends.foldMu.Unlock()
	if err := s.Fold(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := s.Update(context.Background(), func(tx store.Tx) error {
		if err := tx.Put([]byte("log/1"), []byte("chained")); err != nil {
			return err
		}
		return tx.Delete([]byte("q/1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	path := crashCopy(t, s)
	for _, n := range segmentFiles(t, left) {
		b, err := os.ReadFile(segmentPath(left, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(segmentPath(path, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	wantStored(t, path, "log/1", "chained")
	wantStored(t, path, "q/1", "")
}
