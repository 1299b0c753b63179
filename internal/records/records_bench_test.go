package records

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The benchmarks behind the choice of the binary record format
// (internal/tokens/record_token.go, records_log.go): each form encodes and decodes the same
// records, and reports the encoded size.
//
//	go test -run XXX -bench Record -benchmem .

// leanToken is the lean JSON form measured against the binary one: short
// keys, the tenant and id left to the key as in the binary form.
type leanToken struct {
	V  int               `json:"v"`
	T  string            `json:"t"`
	D  json.RawMessage   `json:"d"`
	M  json.RawMessage   `json:"m,omitempty"`
	ME json.RawMessage   `json:"me,omitempty"`
	F  string            `json:"f,omitempty"`
	FE string            `json:"fe,omitempty"`
	C  []string          `json:"c"`
	MD map[string]string `json:"md,omitempty"`
	S  []string          `json:"s,omitempty"`
	DD bool              `json:"dd,omitempty"`
	X  *time.Time        `json:"x,omitempty"`
	CB string            `json:"cb,omitempty"`
	CA time.Time         `json:"ca"`
	MB string            `json:"mb,omitempty"`
	MA *time.Time        `json:"ma,omitempty"`
	CV *time.Time        `json:"cv,omitempty"`
	I  []string          `json:"i,omitempty"`
}

func leanOf(r *tokens.Record) leanToken {
	return leanToken{V: 1, T: r.Type, D: r.Data, M: r.Mask, ME: r.MaskExpression, F: r.Fingerprint,
		FE: r.FingerprintExpression, C: r.Containers, MD: r.Metadata, S: r.SearchIndexes, DD: r.DeduplicateToken,
		X: r.ExpiresAt, CB: r.CreatedBy, CA: r.CreatedAt, MB: r.ModifiedBy, MA: r.ModifiedAt, CV: r.CVCAt, I: r.Indexes}
}

func (l *leanToken) record(key barrier.Key) *tokens.Record {
	return &tokens.Record{ID: unit.KeyID(key.String()), TenantID: key.Tenant(), Type: l.T, Fingerprint: l.F,
		FingerprintExpression: l.FE, Containers: l.C, Metadata: l.MD, SearchIndexes: l.S, DeduplicateToken: l.DD,
		ExpiresAt: l.X, CreatedBy: l.CB, CreatedAt: l.CA, ModifiedBy: l.MB, ModifiedAt: l.MA,
		Data: l.D, Mask: l.M, MaskExpression: l.ME, CVCAt: l.CV, Indexes: l.I}
}

type leanLog struct {
	V  int       `json:"v"`
	A  string    `json:"a,omitempty"`
	AT string    `json:"at,omitempty"`
	ET string    `json:"et"`
	EI string    `json:"ei"`
	O  string    `json:"o"`
	M  string    `json:"m"`
	C  time.Time `json:"c"`
}

func BenchmarkRecord(b *testing.B) {
	logKey := fixLogKey
	for _, rc := range []struct {
		name string
		rec  *tokens.Record
	}{{"token=plain", fixedPlain()}, {"token=card", fixedCard()}} {
		key := fixTokenKey
		bin, _ := rc.rec.AppendRecord(nil, key)
		lean, _ := json.Marshal(leanOf(rc.rec))
		v0, _ := json.Marshal(rc.rec.V0())
		b.Run(rc.name+"/form=binary/op=encode", func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			for b.Loop() {
				buf, _ = rc.rec.AppendRecord(buf[:0], key)
			}
			b.ReportMetric(float64(len(bin)), "bytes")
		})
		b.Run(rc.name+"/form=binary/op=decode", func(b *testing.B) {
			for b.Loop() {
				var r tokens.Record
				if err := r.DecodeRecord(key, bin); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(rc.name+"/form=leanjson/op=encode", func(b *testing.B) {
			for b.Loop() {
				json.Marshal(leanOf(rc.rec))
			}
			b.ReportMetric(float64(len(lean)), "bytes")
		})
		b.Run(rc.name+"/form=leanjson/op=decode", func(b *testing.B) {
			for b.Loop() {
				var l leanToken
				if err := json.Unmarshal(lean, &l); err != nil {
					b.Fatal(err)
				}
				_ = l.record(key)
			}
		})
		b.Run(rc.name+"/form=json-v0/op=encode", func(b *testing.B) {
			for b.Loop() {
				json.Marshal(rc.rec.V0())
			}
			b.ReportMetric(float64(len(v0)), "bytes")
		})
		b.Run(rc.name+"/form=json-v0/op=decode", func(b *testing.B) {
			for b.Loop() {
				var r tokens.Record
				if err := r.DecodeRecord(key, v0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	l := fixedLogLine()
	bin, _ := l.AppendRecord(nil, logKey)
	leanL := leanLog{V: 1, A: l.ActorID, AT: l.ActorType, ET: l.EntityType, EI: l.EntityID, O: l.Operation, M: l.Message, C: l.CreatedAt}
	lean, _ := json.Marshal(leanL)
	v0, _ := json.Marshal(auditlog.LogOf(logKey, l))
	b.Run("log/form=binary/op=encode", func(b *testing.B) {
		buf := make([]byte, 0, 256)
		for b.Loop() {
			buf, _ = l.AppendRecord(buf[:0], logKey)
		}
		b.ReportMetric(float64(len(bin)), "bytes")
	})
	b.Run("log/form=binary/op=decode", func(b *testing.B) {
		for b.Loop() {
			var r auditlog.LineRecord
			if err := r.DecodeRecord(logKey, bin); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("log/form=leanjson/op=encode", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(leanLog{V: 1, A: l.ActorID, AT: l.ActorType, ET: l.EntityType, EI: l.EntityID, O: l.Operation, M: l.Message, C: l.CreatedAt})
		}
		b.ReportMetric(float64(len(lean)), "bytes")
	})
	b.Run("log/form=leanjson/op=decode", func(b *testing.B) {
		for b.Loop() {
			var r leanLog
			if err := json.Unmarshal(lean, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("log/form=json-v0/op=encode", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(auditlog.LogOf(logKey, l))
		}
		b.ReportMetric(float64(len(v0)), "bytes")
	})
	b.Run("log/form=json-v0/op=decode", func(b *testing.B) {
		for b.Loop() {
			var r auditlog.LineRecord
			if err := r.DecodeRecord(logKey, v0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
