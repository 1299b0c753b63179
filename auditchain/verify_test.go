package auditchain_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/auditchain"
)

// chain builds n lines of tenant "t1" and a checkpoint after every
// `every` lines, signed with key.
func chain(n, every int, key ed25519.PrivateKey) ([]auditchain.Entry, []auditchain.Checkpoint) {
	var entries []auditchain.Entry
	var cps []auditchain.Checkpoint
	var prev auditchain.Hash
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := 1; i <= n; i++ {
		l := auditchain.Line{TenantID: "t1", ID: fmt.Sprintf("line-%d", i), CreatedAt: at.Add(time.Duration(i) * time.Second),
			ActorID: "app", ActorType: "application", EntityType: "token", EntityID: "tok", Operation: "read", Message: "Token read"}
		e := auditchain.Entry{Seq: uint64(i), Prev: prev, Line: l}
		e.Hash = auditchain.LineHash(prev, e.Seq, &l)
		prev = e.Hash
		entries = append(entries, e)
		if i%every == 0 {
			c := auditchain.Checkpoint{TenantID: "t1", Seq: e.Seq, Hash: e.Hash, CreatedAt: l.CreatedAt}
			c.Sign(key)
			cps = append(cps, c)
		}
	}
	return entries, cps
}

func verify(entries []auditchain.Entry, cps []auditchain.Checkpoint, pub ed25519.PublicKey) *auditchain.Report {
	v := auditchain.NewVerifier("t1", []auditchain.PublicKey{{Key: pub, Algorithm: "Ed25519"}})
	v.ExpectFirst = 1
	for _, e := range entries {
		v.AddLine(e)
	}
	for _, c := range cps {
		v.AddCheckpoint(c)
	}
	return v.Report()
}

func TestVerifyFindsEachTampering(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	type want struct {
		kind auditchain.ProblemKind
		seq  uint64
	}
	for _, tc := range []struct {
		name   string
		tamper func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint)
		want   []want
	}{
		{"untouched", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			return es, cps
		}, nil},
		{"duplicated", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			return append(es, es[3], es[0]), append(cps, cps[0])
		}, nil},
		{"altered", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			es[2].Line.Message = "nothing to see"
			return es, cps
		}, []want{{auditchain.Altered, 3}}},
		{"altered and rehashed", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			es[2].Line.Message = "nothing to see"
			es[2].Hash = auditchain.LineHash(es[2].Prev, 3, &es[2].Line)
			return es, cps
		}, []want{{auditchain.BrokenLink, 4}}},
		{"deleted", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			return append(es[:3:3], es[4:]...), cps
		}, []want{{auditchain.Missing, 4}}},
		{"reordered", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			es[3].Seq, es[4].Seq = 5, 4
			return es, cps
		}, []want{{auditchain.Altered, 4}, {auditchain.BrokenLink, 4}, {auditchain.Altered, 5}, {auditchain.BadCheckpoint, 5},
			{auditchain.BrokenLink, 5}, {auditchain.BrokenLink, 6}}},
		{"inserted", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			forged := es[5]
			forged.Line.ID = "forged"
			forged.Hash = auditchain.LineHash(forged.Prev, forged.Seq, &forged.Line)
			return append(es, forged), cps
		}, []want{{auditchain.Fork, 6}}},
		{"tail truncated below a checkpoint", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			return es[:8], cps
		}, []want{{auditchain.UnsignedTail, 6}, {auditchain.Missing, 9}}},
		{"tail truncated with its checkpoint", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			return es[:8], cps[:1]
		}, []want{{auditchain.UnsignedTail, 6}}},
		{"head truncated", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			return es[2:], cps
		}, []want{{auditchain.Missing, 1}}},
		{"forged checkpoint", func(es []auditchain.Entry, cps []auditchain.Checkpoint) ([]auditchain.Entry, []auditchain.Checkpoint) {
			cps[1].Sign(otherKey)
			return es, cps
		}, []want{{auditchain.UnsignedTail, 6}, {auditchain.BadCheckpoint, 10}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, cps := tc.tamper(chain(10, 5, priv))
			r := verify(es, cps, pub)
			var got []want
			for _, p := range r.Problems {
				got = append(got, want{p.Kind, p.Seq})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("problems %v, want %v", r.Problems, tc.want)
			}
			if r.OK != (len(tc.want) == 0) {
				t.Errorf("OK = %v with problems %v", r.OK, r.Problems)
			}
		})
	}
}
