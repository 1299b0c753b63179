package auditlog

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
)

// xorWrap is a stand-in key wrapper: it wraps by XOR with the store key's
// first byte, so that a seed wrapped for one key does not open for another.
func xorWrap(storeKey string, b []byte) ([]byte, error) {
	out := bytes.Clone(b)
	for i := range out {
		out[i] ^= storeKey[len(storeKey)-1]
	}
	return out, nil
}

func TestNewKeyOpens(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.FixedZone("X", 3600))
	rec, s, err := NewKey(rand.Reader, now, xorWrap)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != auditchain.KeyID(ed25519.PublicKey(rec.Public)) || s.ID != rec.ID || !rec.CreatedAt.Equal(now) || rec.CreatedAt.Location() != time.UTC {
		t.Errorf("NewKey = %v created %v, signer %v", rec, rec.CreatedAt, s)
	}
	if bytes.Contains(rec.Wrapped, s.Key.Seed()) {
		t.Error("the record holds the seed in the clear")
	}
	got, err := OpenKey(rec, xorWrap)
	if err != nil || !got.Key.Equal(s.Key) {
		t.Fatalf("OpenKey = %v, %v; want the key made", got, err)
	}
	// A seed that does not match the public key, or is short, is refused.
	other, _, _ := NewKey(rand.Reader, now, xorWrap)
	bad := *rec
	bad.Wrapped = other.Wrapped
	if _, err := OpenKey(&bad, xorWrap); err == nil {
		t.Error("OpenKey of another key's seed succeeded")
	}
	if _, err := OpenKey(rec, func(string, []byte) ([]byte, error) { return []byte{1}, nil }); err == nil {
		t.Error("OpenKey of a short seed succeeded")
	}
	boom := errors.New("boom")
	if _, err := OpenKey(rec, func(string, []byte) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("OpenKey with a failing unwrap = %v", err)
	}
	if s.String() != "tokenvault.auditSigner{"+s.ID+"}" {
		t.Errorf("Signer.String() = %q", s.String())
	}
}

func TestActiveKeyAndPublicKeyOf(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := &KeyRecord{ID: "old", Public: make([]byte, 32), CreatedAt: at, RetiredAt: at.Add(time.Hour)}
	cur := &KeyRecord{ID: "cur", Public: bytes.Repeat([]byte{7}, 32), CreatedAt: at.Add(time.Hour)}
	if got := ActiveKey([]*KeyRecord{old, cur}); got != cur {
		t.Errorf("ActiveKey = %v, want cur", got)
	}
	if got := ActiveKey([]*KeyRecord{old}); got != nil {
		t.Errorf("ActiveKey of retired keys = %v, want nil", got)
	}
	pk := PublicKeyOf(old)
	if pk.ID != "old" || pk.Algorithm != KeyAlgorithm || pk.RetiredAt == nil || !pk.RetiredAt.Equal(old.RetiredAt) {
		t.Errorf("PublicKeyOf(retired) = %+v", pk)
	}
	pk = PublicKeyOf(cur)
	pk.Key[0] = 0
	if pk.RetiredAt != nil || cur.Public[0] != 7 {
		t.Errorf("PublicKeyOf(in use) = %+v, or shares its bytes with the record", pk)
	}
}

func TestCheckpointTick(t *testing.T) {
	for _, tc := range []struct{ interval, want time.Duration }{
		{500 * time.Millisecond, 500 * time.Millisecond},
		{5 * time.Second, time.Second},
		{time.Minute, 6 * time.Second},
	} {
		if got := CheckpointTick(tc.interval); got != tc.want {
			t.Errorf("CheckpointTick(%v) = %v, want %v", tc.interval, got, tc.want)
		}
	}
	if got := RotationMessage("a", "b"); got != "Audit signing key rotated from a to b" {
		t.Errorf("RotationMessage = %q", got)
	}
}
