package seal

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
)

func mustKeyring(t testing.TB) *Keyring {
	t.Helper()
	r, err := NewKeyring(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestKeyringRoundTrip(t *testing.T) {
	r := mustKeyring(t)
	for _, pt := range [][]byte{nil, {}, []byte("4242424242424242"), bytes.Repeat([]byte("x"), 1<<16)} {
		ct := r.Seal([]byte("tenant/a/token/1"), pt)
		if len(ct) != len(pt)+Overhead {
			t.Errorf("len(Seal(%d bytes)) = %d, want %d", len(pt), len(ct), len(pt)+Overhead)
		}
		got, err := r.Open([]byte("tenant/a/token/1"), ct)
		if err != nil {
			t.Fatalf("Open(Seal(%d bytes)) = %v", len(pt), err)
		}
		if !bytes.Equal(got, pt) {
			t.Errorf("Open(Seal(%q)) = %q", pt, got)
		}
	}
}

func TestSealIsConfidentialAndRandomized(t *testing.T) {
	r := mustKeyring(t)
	pt := []byte("4242424242424242")
	a, b := r.Seal(nil, pt), r.Seal(nil, pt)
	if bytes.Contains(a, pt) {
		t.Errorf("ciphertext contains the plaintext")
	}
	if bytes.Equal(a, b) {
		t.Errorf("two seals of one plaintext are equal: nonces repeat")
	}
}

// TestTamperingFails flips every bit of a ciphertext in turn, truncates it
// at every length, and moves it to other additional data: each must fail
// with ErrOpen and nothing else.
func TestTamperingFails(t *testing.T) {
	r := mustKeyring(t)
	aad := []byte("tenant/a/token/1")
	ct := r.Seal(aad, []byte("secret value"))
	wantErrOpen := func(what string, ct, aad []byte) {
		t.Helper()
		pt, err := r.Open(aad, ct)
		if !errors.Is(err, ErrOpen) || pt != nil {
			t.Errorf("Open(%s) = %q, %v; want nil, ErrOpen", what, pt, err)
		}
	}
	for i := range len(ct) * 8 {
		bad := bytes.Clone(ct)
		bad[i/8] ^= 1 << (i % 8)
		wantErrOpen(fmt.Sprintf("bit %d flipped", i), bad, aad)
	}
	for n := range len(ct) {
		wantErrOpen(fmt.Sprintf("truncated to %d", n), ct[:n], aad)
	}
	wantErrOpen("moved to another key", ct, []byte("tenant/b/token/1"))
	wantErrOpen("with empty aad", ct, nil)
	other := mustKeyring(t)
	if _, err := other.Open(aad, ct); !errors.Is(err, ErrOpen) {
		t.Errorf("other keyring Open = %v, want ErrOpen", err)
	}
}

func TestRotation(t *testing.T) {
	r1 := mustKeyring(t)
	old := r1.Seal([]byte("k"), []byte("old"))
	r2, err := r1.Rotate(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if r1.ActiveTerm() != 1 || r2.ActiveTerm() != 2 {
		t.Fatalf("terms = %d, %d; want 1, 2", r1.ActiveTerm(), r2.ActiveTerm())
	}
	if got := fmt.Sprint(r2.Terms()); got != "[1 2]" {
		t.Errorf("Terms() = %s", got)
	}
	if pt, err := r2.Open([]byte("k"), old); err != nil || string(pt) != "old" {
		t.Errorf("rotated Open(old) = %q, %v", pt, err)
	}
	fresh := r2.Seal([]byte("k"), []byte("new"))
	if term, ok := Term(fresh); !ok || term != 2 {
		t.Errorf("Term(new) = %d, %v; want 2", term, ok)
	}
	if _, err := r1.Open([]byte("k"), fresh); !errors.Is(err, ErrOpen) {
		t.Errorf("old keyring opened a newer term: %v", err)
	}
}

func TestMarshalKeyring(t *testing.T) {
	r, _ := mustKeyring(t).Rotate(rand.Reader)
	b, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalKeyring(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.ActiveTerm() != 2 || fmt.Sprint(back.Terms()) != "[1 2]" {
		t.Errorf("unmarshalled keyring = %v", back)
	}
	ct := r.Seal([]byte("k"), []byte("v"))
	if pt, err := back.Open([]byte("k"), ct); err != nil || string(pt) != "v" {
		t.Errorf("unmarshalled Open = %q, %v", pt, err)
	}
	for _, bad := range [][]byte{nil, b[:len(b)-1], append(bytes.Clone(b), 0), append([]byte{9}, b[1:]...)} {
		if _, err := UnmarshalKeyring(bad); err == nil {
			t.Errorf("UnmarshalKeyring(%d bytes, malformed) = nil error", len(bad))
		}
	}
}

func TestMasterKey(t *testing.T) {
	k1, _ := RandomKey(rand.Reader)
	k2, _ := RandomKey(rand.Reader)
	m1, err := NewMasterKey(k1)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := m1.Seal([]byte("sys/keyring"), []byte("ring"))
	m2, err := m1.Rotate(k2)
	if err != nil {
		t.Fatal(err)
	}
	if m2.ID() == m1.ID() {
		t.Fatalf("rotated master key has the same id")
	}
	if pt, err := m2.Open([]byte("sys/keyring"), wrapped); err != nil || string(pt) != "ring" {
		t.Errorf("rotated master Open(old) = %q, %v", pt, err)
	}
	rewrapped := m2.Seal([]byte("sys/keyring"), []byte("ring"))
	if _, err := m1.Open([]byte("sys/keyring"), rewrapped); !errors.Is(err, ErrOpen) {
		t.Errorf("old master opened a newer wrap: %v", err)
	}
	// A restart with the new key current and the old one previous.
	restarted, err := NewMasterKey(k2, k1)
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range [][]byte{wrapped, rewrapped} {
		if _, err := restarted.Open([]byte("sys/keyring"), ct); err != nil {
			t.Errorf("restarted master Open = %v", err)
		}
	}
	if restarted.ID() != m2.ID() {
		t.Errorf("ids are not stable across restarts")
	}
}

// TestKeysNeverPrinted checks that formatting keys and key errors shows no
// key material.
func TestKeysNeverPrinted(t *testing.T) {
	k := bytes.Repeat([]byte{0xab}, KeySize)
	m, _ := NewMasterKey(k)
	r := mustKeyring(t)
	raw, _ := r.MarshalBinary()
	secretHex := []string{hex.EncodeToString(k), hex.EncodeToString(raw[13 : 13+8])}
	_, shortErr := NewMasterKey(k[:31])
	for _, s := range []string{
		fmt.Sprint(m), fmt.Sprintf("%v %+v %#v", m, m, m),
		fmt.Sprint(r), fmt.Sprintf("%v %+v %#v", r, r, r),
		shortErr.Error(),
	} {
		for _, h := range secretHex {
			if bytes.Contains([]byte(fmt.Sprintf("%x", s)), []byte(h)) || bytes.Contains([]byte(s), []byte(h)) {
				t.Errorf("formatted %q contains key bytes", s)
			}
		}
		if bytes.Contains([]byte(s), []byte("171, 171")) || bytes.Contains([]byte(s), []byte("0xab")) {
			t.Errorf("formatted %q contains key bytes", s)
		}
	}
}

func TestBadKeys(t *testing.T) {
	good, _ := RandomKey(rand.Reader)
	for _, tc := range []struct {
		cur  []byte
		prev [][]byte
	}{
		{nil, nil}, {good[:16], nil}, {append(bytes.Clone(good), 1), nil}, {good, [][]byte{good[:1]}},
	} {
		if _, err := NewMasterKey(tc.cur, tc.prev...); err == nil {
			t.Errorf("NewMasterKey(%d bytes, %d previous) = nil error", len(tc.cur), len(tc.prev))
		}
	}
}

// TestGoldenVector pins the ciphertext format: a value sealed by an earlier
// build must keep opening. It was produced with the all-zero nonce and key
// below.
const goldenHex = "0100000003000000000000000000000000000000000000000000000000570f82a61343548d46576f22965221981a3b42e87046"

func TestGoldenVector(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	r := newKeyring(3, map[uint32][]byte{3: key})
	ct, err := sealWith(r.aeads[3], 3, bytes.NewReader(make([]byte, 24)), []byte("aad"), []byte("golden"))
	if err != nil {
		t.Fatal(err)
	}
	const want = "0100000003000000000000000000000000000000000000000000000000"
	if got := hex.EncodeToString(ct[:headerSize]); got != want {
		t.Errorf("header = %s, want %s", got, want)
	}
	golden, _ := hex.DecodeString(goldenHex)
	if !bytes.Equal(ct, golden) {
		t.Errorf("Seal = %x, want %s", ct, goldenHex)
	}
	if pt, err := r.Open([]byte("aad"), golden); err != nil || string(pt) != "golden" {
		t.Errorf("Open(golden) = %q, %v", pt, err)
	}
}

func FuzzOpen(f *testing.F) {
	r := newKeyring(1, map[uint32][]byte{1: bytes.Repeat([]byte{1}, KeySize)})
	f.Add(r.Seal([]byte("a"), []byte("value")), []byte("a"))
	f.Add([]byte{1, 0, 0, 0, 1}, []byte(nil))
	f.Fuzz(func(t *testing.T, ct, aad []byte) {
		pt, err := r.Open(aad, ct)
		if err != nil && (!errors.Is(err, ErrOpen) || pt != nil) {
			t.Fatalf("Open = %q, %v", pt, err)
		}
	})
}

func BenchmarkSeal64(b *testing.B) {
	r := mustKeyring(b)
	pt, aad := make([]byte, 64), []byte("tenant/0190/token/0190")
	b.SetBytes(64)
	for b.Loop() {
		r.Seal(aad, pt)
	}
}

func BenchmarkOpen64(b *testing.B) {
	r := mustKeyring(b)
	aad := []byte("tenant/0190/token/0190")
	ct := r.Seal(aad, make([]byte, 64))
	b.SetBytes(64)
	for b.Loop() {
		if _, err := r.Open(aad, ct); err != nil {
			b.Fatal(err)
		}
	}
}
