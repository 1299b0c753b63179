package tokens

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// A card's cvc (card verification code) may be kept only briefly (PCI DSS
// forbids storing it after authorization). A card record remembers when
// its cvc was written (CVCAt: tokenizing, or a patch sending a cvc); once
// Options.Retention.CVC has passed since then:
//
//   - every read leaves the cvc out at once, whether the sweeper has run or
//     not: records are filtered where they are opened (Service.Load, which
//     every list reads them through), so GetToken, ListTokens, SearchTokens,
//     Detokenize, reactor arguments, proxy bodies and req.client all see
//     the card without it, and a patch cannot bring it back;
//   - the sweeper removes it from the stored record, in store transactions
//     of at most a batch of cards, found through the schedule
//     sys/cvc/<write time>/<tid>/<id>. The schedule is by write time, not
//     by due time, so that a retention changed between runs applies to
//     cvcs already stored.
//
// Masks, fingerprints and search indexes of a card are computed over its
// data without the cvc (see ExprData), so nothing derived from a cvc is
// kept past its window.

// CVCField is the card data field that is kept only for the retention.
const CVCField = "cvc"

// HasCVC reports whether data, of a token of type typ, holds a cvc.
func HasCVC(typ string, data any) bool {
	m, ok := data.(map[string]any)
	_, has := m[CVCField]
	return ok && has && typ == unit.TypeCard
}

// ExprData is the data a token's expressions (mask, fingerprint, search
// indexes) are evaluated over: a card's without its cvc.
func ExprData(typ string, data any) any {
	if !HasCVC(typ, data) {
		return data
	}
	m := data.(map[string]any)
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != CVCField {
			out[k] = v
		}
	}
	return out
}

// CVCWrittenAt is when the cvc of rec was written, and whether it holds
// one. Cards stored before cvc retention existed hold a cvc without CVCAt:
// their last write (modified_at, else created_at) stands in.
func CVCWrittenAt(rec *Record) (time.Time, bool) {
	if rec.CVCAt != nil {
		return *rec.CVCAt, true
	}
	if rec.Type != unit.TypeCard || !bytes.Contains(rec.Data, []byte(`"cvc"`)) {
		return time.Time{}, false
	}
	if d, err := jsontext.DecodeLastWins(rec.Data); err != nil || !HasCVC(rec.Type, d) {
		return time.Time{}, false
	}
	if rec.ModifiedAt != nil {
		return *rec.ModifiedAt, true
	}
	return rec.CreatedAt, true
}

// WithoutCVC removes the cvc from stored card data.
func WithoutCVC(raw json.RawMessage) json.RawMessage {
	d, err := jsontext.DecodeLastWins(raw)
	m, ok := d.(map[string]any)
	if err != nil || !ok {
		return raw
	}
	delete(m, CVCField)
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// CVCSchedule is the family of the cvc schedule entries the sweeper
// walks, each <nanos>/<tenant>/<id> after it: the card's cvc written at
// nanos (barrier.TimeKey), due CVCRetention later.
var CVCSchedule = barrier.CVCSchedule

// CVCsDueThrough is the last schedule stamp (barrier.TimeKey) whose cvc is
// due at now.
func (s *Service) CVCsDueThrough(now time.Time) string {
	return barrier.TimeKey(now.Add(-s.CVCRetention))
}

// RemoveScheduledCVC is RemoveCVC for the schedule entry rest (what
// follows CVCSchedule in its key); an entry of another form removes
// nothing.
func (s *Service) RemoveScheduledCVC(t *unit.Tx, rest string) (bool, error) {
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return false, nil
	}
	return s.RemoveCVC(t, parts[1], parts[2], parts[0])
}

// RemoveCVC writes the card tid/id again without the cvc its schedule
// entry (written at stamp) was for. It reports false when there is nothing
// to remove: the token is gone, or its cvc was removed or written again
// since (a newer cvc has its own entry).
func (s *Service) RemoveCVC(t *unit.Tx, tid, id, stamp string) (bool, error) {
	key := barrier.Tenant(tid).Record(Kind, id)
	var rec Record
	ok, err := t.GetRecord(key, &rec)
	if err != nil || !ok {
		return false, err
	}
	if err := s.openSubject(t, &rec); err != nil {
		return false, err
	}
	if rec.Erased || rec.CVCAt == nil || barrier.TimeKey(*rec.CVCAt) != stamp || !s.CVCDue(&rec, t.Now) {
		return false, nil
	}
	rec.Data = WithoutCVC(rec.Data)
	rec.CVCAt = nil
	rec.Indexes = slices.DeleteFunc(rec.Indexes, func(k string) bool { return strings.HasPrefix(k, barrier.CVCSchedule.String()) })
	if err := t.PutRecord(key, &rec); err != nil {
		return false, err
	}
	if err := EmitCVCExpired(t, &rec); err != nil {
		return false, err
	}
	return true, t.Log(unit.SystemActor, tid, rec.Type, id, unit.OpUpdate, "Card cvc removed (retention)")
}

// ScheduleLegacyCVCs is one transaction of the scan that gives every
// card stored before cvc retention existed (a cvc without CVCAt) its
// schedule: it visits at most batch token records from where the scan
// (LegacyCVCScan) stopped, removing the cvcs already due and recording
// when the others were written (CVCWrittenAt). It returns how many cvcs
// it removed and whether the scan is done.
func (s *Service) ScheduleLegacyCVCs(t *unit.Tx, batch int) (removed int, done bool, err error) {
	var st LegacyCVCScan
	if _, err := t.GetRecord(barrier.SysCVCScan, &st); err != nil {
		return 0, false, err
	}
	if st.Done {
		return 0, true, nil
	}
	// The next tenant with records left: st.Tenant, then those after.
	var tenants []string
	err = t.ScanKeys(barrier.TenantRegistry, func(_ barrier.Key, tid string) error {
		if tid >= st.Tenant {
			tenants = append(tenants, tid)
		}
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	visited := 0
	for _, tid := range tenants {
		if tid != st.Tenant {
			st.Tenant, st.After = tid, ""
		}
		prefix := barrier.Tenant(tid).Records(Kind)
		kvs, err := t.ScanValuesAfter(prefix, strings.TrimPrefix(st.After, prefix.String()), batch-visited)
		if err != nil {
			return removed, done, err
		}
		for _, kv := range kvs {
			visited++
			st.After = kv.Key.String()
			n, err := s.scheduleLegacyCVC(t, kv)
			if err != nil {
				return removed, done, err
			}
			removed += n
		}
		if visited == batch {
			return removed, done, t.PutRecord(barrier.SysCVCScan, &st)
		}
	}
	st.Done = true
	return removed, true, t.PutRecord(barrier.SysCVCScan, &st)
}

// scheduleLegacyCVC handles one token record of the legacy scan: a card
// holding a cvc without CVCAt gets it removed if due, else its write time
// and schedule. It returns 1 when it removed a cvc.
func (s *Service) scheduleLegacyCVC(t *unit.Tx, kv barrier.StoredValue) (int, error) {
	var rec Record
	if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
		return 0, err
	}
	at, ok := CVCWrittenAt(&rec)
	if !ok || rec.CVCAt != nil {
		return 0, nil
	}
	if s.CVCDue(&rec, t.Now) {
		rec.Data = WithoutCVC(rec.Data)
		if err := t.PutRecord(kv.Key, &rec); err != nil {
			return 0, err
		}
		if err := EmitCVCExpired(t, &rec); err != nil {
			return 0, err
		}
		return 1, t.Log(unit.SystemActor, rec.TenantID, rec.Type, rec.ID, unit.OpUpdate, "Card cvc removed (retention)")
	}
	rec.CVCAt = &at
	entry := barrier.Tenant(rec.TenantID).CVCDue(at, rec.ID)
	rec.Indexes = append(rec.Indexes, entry.String())
	slices.Sort(rec.Indexes)
	if err := t.PutIndex(entry); err != nil {
		return 0, err
	}
	return 0, t.PutRecord(kv.Key, &rec)
}
