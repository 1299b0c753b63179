package idempotency

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Limits of idempotency keys.
const (
	// Window is how long a response is kept for repeats, counted from the
	// first request.
	Window = 24 * time.Hour
	// Lease is how long a claim on an idempotency key lasts while its
	// request runs; a request still running then is cancelled, and a
	// repeat after it runs again.
	Lease = 5 * time.Minute
	// MaxKeyLength bounds an idempotency key: 1 to 255 printable ASCII
	// characters (space to tilde).
	MaxKeyLength = 255
)

// ValidKey checks the form of an idempotency key. Returns Invalid naming
// the Idempotency-Key header.
func ValidKey(k string) error {
	if k == "" || len(k) > MaxKeyLength {
		return unit.InvalidField("Idempotency-Key", "must be 1 to %d characters", MaxKeyLength)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return unit.InvalidField("Idempotency-Key", "must be printable ASCII")
		}
	}
	return nil
}

// Storable reports whether a response of status is kept for repeats:
// 200 to 499 but 429. A server error or a rate limit is worth retrying.
func Storable(status int) bool {
	return status >= 200 && status < 500 && status != 429
}

// Fingerprint is the hash of a request (its operation and body) a repeat
// must match.
func Fingerprint(operation string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(operation))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)
}

// grantsDigest identifies what p may do: its permissions, its rules,
// for a session its ceilings, and the purpose of access its call names.
func grantsDigest(p *access.Principal) []byte {
	b, _ := json.Marshal(struct {
		P []string        `json:"p"`
		R []access.Rule   `json:"r"`
		C []access.Grants `json:"c"`
		// U is the call's purpose of access: a response kept for one
		// purpose is not replayed to a call naming another, or none. Empty
		// is left out, so the digests of calls without one are as before.
		U string `json:"u,omitempty"`
	}{p.Permissions, p.Rules, p.Ceilings, p.Purpose})
	d := sha256.Sum256(b)
	return d[:]
}

// A Claimed is what Claim found or took for one key.
type Claimed struct {
	// Key is the record's store key, for Finish.
	Key barrier.Key
	// Kept is the response kept from the first run: answer it, run
	// nothing.
	Kept *Response
}

// Claim claims, in t, the idempotency key idemKey of the caller p for a
// request whose Fingerprint is fp, under the random claim id claim; or
// finds the response kept for it. The record is found by a keyed HMAC of
// the caller and the key with the tenant's index key: the key as given is
// stored nowhere.
//
// Returns Unprocessable (the key was used with another request, or p's
// grants changed since the response was kept), Conflict (a claim on the
// key is still running), or the store's errors.
func Claim(t *unit.Tx, p *access.Principal, idemKey string, fp []byte, claim string) (Claimed, error) {
	tid := p.TenantID
	grants := grantsDigest(p)
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return Claimed{}, err
	}
	recKey := barrier.Tenant(tid).Record(Kind, hex.EncodeToString(ks.MAC(
		[]byte("idempotency\x00"), []byte(p.ActorType), []byte{0}, []byte(p.ActorID), []byte{0}, []byte(idemKey))))

	var rec Record
	found, err := t.GetRecord(recKey, &rec)
	if err != nil {
		return Claimed{}, err
	}
	if found && !rec.Expired(t.Now) {
		switch {
		case subtle.ConstantTimeCompare(rec.Fingerprint, fp) != 1:
			return Claimed{}, unit.Errorf(unit.Unprocessable, "this Idempotency-Key was used with another request (another body or operation)")
		case rec.Response != nil && len(rec.Grants) > 0 && !bytes.Equal(rec.Grants, grants):
			return Claimed{}, unit.Errorf(unit.Unprocessable, "the key's permissions changed since this Idempotency-Key was first used, so its answer is not repeated; send the request with a new Idempotency-Key")
		case rec.Response != nil:
			return Claimed{Key: recKey, Kept: rec.Response}, nil
		case t.Now.Before(rec.LeaseUntil):
			return Claimed{}, unit.Errorf(unit.Conflict, "a request with this Idempotency-Key is still in progress; retry later")
		}
		// The claim's lease is over: its instance crashed or gave up.
	}
	if found {
		if err := t.Delete(expiry(tid, &rec, recKey)); err != nil {
			return Claimed{}, err
		}
	}
	rec = Record{Version: 1, Fingerprint: fp, CreatedAt: t.Now, ExpiresAt: t.Now.Add(Window),
		Claim: claim, LeaseUntil: t.Now.Add(Lease), Grants: grants}
	if err := t.PutRecord(recKey, &rec); err != nil {
		return Claimed{}, err
	}
	return Claimed{Key: recKey}, t.PutIndex(expiry(tid, &rec, recKey))
}

// Finish keeps resp, in t, as the answer of the key claimed at recKey
// under claim, or with resp nil releases the key. A claim taken over
// meanwhile (its lease ran out) is left to its new holder.
func Finish(t *unit.Tx, recKey barrier.Key, tid, claim string, resp *Response) error {
	var rec Record
	found, err := t.GetRecord(recKey, &rec)
	if err != nil || !found || rec.Claim != claim {
		return err
	}
	if resp == nil {
		if err := t.Delete(expiry(tid, &rec, recKey)); err != nil {
			return err
		}
		return t.Delete(recKey)
	}
	rec.Claim, rec.LeaseUntil, rec.Response = "", time.Time{}, resp
	return t.PutRecord(recKey, &rec)
}

// Sweep removes, in t, tenant tid's record id if its window is over, and
// reports whether it did.
func Sweep(t *unit.Tx, tid, id string) (bool, error) {
	k := barrier.Tenant(tid).Record(Kind, id)
	var rec Record
	found, err := t.GetRecord(k, &rec)
	if err != nil || !found || !rec.Expired(t.Now) {
		return false, err
	}
	return true, t.Delete(k)
}

// expiry is the sweeper's schedule entry of rec, stored at recKey.
func expiry(tid string, rec *Record, recKey barrier.Key) barrier.Key {
	return barrier.Tenant(tid).Expiry(rec.ExpiresAt, Kind, unit.KeyID(recKey.String()))
}
