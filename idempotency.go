package tokenvault

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/idempotency"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Idempotency. A caller that cannot tell whether a creating request took
// effect (a timeout, a dropped connection) sends it again with the same
// idempotency key, and gets the first answer instead of a second resource.
//
// The rules, all in [Vault.Idempotent]:
//
//   - A record is kept per caller (the application or session that
//     authenticated, within its tenant) and idempotency key, found by a
//     keyed HMAC of the two with the tenant's index key; the key as given
//     is stored nowhere. The record holds a hash of the request (its
//     operation and body) and, once the request has run, its response
//     (status, headers, body), sealed with the tenant's data key like every
//     record: responses may hold token data, API keys or session keys.
//   - A repeat with the same key and request within IdempotencyWindow
//     (24 hours from the first) answers the stored response without
//     running anything. The same key with another request (another body or
//     another operation) is Unprocessable. A repeat while the first is
//     still running is Conflict (409): the caller should retry later.
//   - The first request claims the key in a store transaction before it
//     runs, so two requests (on one instance or on several sharing a
//     PostgreSQL store) cannot both run. A claim lasts IdempotencyLease;
//     the run's context is cancelled then, and a claim left by an instance
//     that crashed is taken over by the next repeat after the lease ends.
//   - Only outcomes worth repeating are kept: a response of status 200 to
//     499 except 429. A response of status 500 or more or 429, an error
//     returned by run, or a panic releases the key, so a retry runs again
//     (a Vault operation that fails writes nothing, so this is safe).
//   - Records are removed by the sweeper once IdempotencyWindow has passed,
//     and are treated as absent from that instant.
//   - A public application's requests are never kept nor replayed: its key
//     is in every end user's browser, so a kept answer (a session key,
//     token ids) would go to whoever repeats the Idempotency-Key. They run
//     each time, as without the header. A session is one end user's, and
//     keeps its own records.
//   - A repeat is answered only while the caller holds the grants it held
//     the first time (permissions, rules, and a session's ceilings): a key
//     whose permission was taken away must not go on getting what it
//     created, such as a regenerated key. After a change it is
//     Unprocessable; a new Idempotency-Key runs the request again, under
//     the grants as they are. A repeat of a regenerate answers the key it
//     made then, even when a later regenerate has replaced it.

// Idempotency limits.
const (
	// IdempotencyWindow is how long a response is kept for repeats,
	// counted from the first request.
	IdempotencyWindow = 24 * time.Hour
	// IdempotencyLease is how long a claim on an idempotency key lasts
	// while its request runs; a request still running then is cancelled,
	// and a repeat after it runs again.
	IdempotencyLease = 5 * time.Minute
	// MaxIdempotencyKeyLength bounds an idempotency key: 1 to 255
	// printable ASCII characters (space to tilde).
	MaxIdempotencyKeyLength = 255
)

// kindIdempotency is the record kind of idempotency records:
// tenant/<tid>/idempotency/<hmac>.
const kindIdempotency = idempotency.Kind

// IdempotentRequest is what an idempotent call does, to recognise a repeat:
// a repeat must have the same Operation and Body.
type IdempotentRequest struct {
	// Operation names the operation and its target, for example
	// "POST /reactors/<id>/react" (httpapi uses the method and path).
	Operation string
	// Body is the request body, byte for byte.
	Body []byte
}

// IdempotentResponse is the outcome of an idempotent call as its caller
// encodes it: httpapi keeps the HTTP status, headers and body.
type IdempotentResponse = idempotency.Response

// grantsDigest identifies what p may do: its permissions, its rules and,
// for a session, its ceilings.
func grantsDigest(p *principal) []byte {
	b, _ := json.Marshal(struct {
		P []string     `json:"p"`
		R []AccessRule `json:"r"`
		C []grants     `json:"c"`
	}{p.Permissions, p.Rules, p.Ceilings})
	d := sha256.Sum256(b)
	return d[:]
}

// validIdempotencyKey checks the form of an idempotency key.
func validIdempotencyKey(k string) error {
	if k == "" || len(k) > MaxIdempotencyKeyLength {
		return unit.InvalidField("Idempotency-Key", "must be 1 to %d characters", MaxIdempotencyKeyLength)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return unit.InvalidField("Idempotency-Key", "must be printable ASCII")
		}
	}
	return nil
}

// idempotencyStorable reports whether a response is kept for repeats.
func idempotencyStorable(status int) bool {
	return status >= 200 && status < 500 && status != 429
}

// Idempotent runs run at most once for the caller authenticated by key and
// idempotencyKey (see "Idempotency" in the package documentation), and
// returns its response, or the response kept from the first run with
// replayed true. run gets a context that ends when the claim's lease does;
// every Vault call it makes with it is charged once, with this call,
// against the rate limits.
//
// Returns Invalid (the idempotency key is empty, longer than
// MaxIdempotencyKeyLength or not printable ASCII), Unauthenticated,
// RateLimited, Unprocessable (the key was used with another request, or
// the caller's grants changed since its first use),
// Conflict (a request with this key is still running), or run's own error
// (which releases the key).
func (v *Vault) Idempotent(ctx context.Context, key Credential, idempotencyKey string, req IdempotentRequest, run func(context.Context) (*IdempotentResponse, error)) (resp *IdempotentResponse, replayed bool, err error) {
	if err := validIdempotencyKey(idempotencyKey); err != nil {
		return nil, false, err
	}
	ctx = unit.WithCall(ctx)
	h := sha256.New()
	h.Write([]byte(req.Operation))
	h.Write([]byte{0})
	h.Write(req.Body)
	fp := h.Sum(nil)
	var c [16]byte
	rand.Read(c[:])
	claim := hex.EncodeToString(c[:])

	var recKey barrier.Key
	var tid string
	var kept *IdempotentResponse
	var public bool
	err = v.update(ctx, func(t *txn) error {
		kept = nil
		p, err := t.authenticate(key)
		if err != nil {
			return err
		}
		if public = p.ActorType == ActorApplication && p.AppType == Public; public {
			return nil
		}
		tid = p.TenantID
		grants := grantsDigest(p)
		ks, err := t.TenantKeys(tid, false)
		if err != nil {
			return err
		}
		recKey = barrier.Tenant(tid).Record(kindIdempotency, hex.EncodeToString(ks.MAC(
			[]byte("idempotency\x00"), []byte(p.ActorType), []byte{0}, []byte(p.ActorID), []byte{0}, []byte(idempotencyKey))))

		var rec idempotency.Record
		found, err := t.GetRecord(recKey, &rec)
		if err != nil {
			return err
		}
		if found && !rec.Expired(t.Now) {
			switch {
			case subtle.ConstantTimeCompare(rec.Fingerprint, fp) != 1:
				return unit.Errorf(Unprocessable, "this Idempotency-Key was used with another request (another body or operation)")
			case rec.Response != nil && len(rec.Grants) > 0 && !bytes.Equal(rec.Grants, grants):
				return unit.Errorf(Unprocessable, "the key's permissions changed since this Idempotency-Key was first used, so its answer is not repeated; send the request with a new Idempotency-Key")
			case rec.Response != nil:
				kept = rec.Response
				return nil
			case t.Now.Before(rec.LeaseUntil):
				return unit.Errorf(Conflict, "a request with this Idempotency-Key is still in progress; retry later")
			}
			// The claim's lease is over: its instance crashed or gave up.
		}
		if found {
			if err := t.Delete(barrier.Tenant(tid).Expiry(rec.ExpiresAt, kindIdempotency, unit.KeyID(recKey.String()))); err != nil {
				return err
			}
		}
		rec = idempotency.Record{Version: 1, Fingerprint: fp, CreatedAt: t.Now, ExpiresAt: t.Now.Add(IdempotencyWindow),
			Claim: claim, LeaseUntil: t.Now.Add(IdempotencyLease), Grants: grants}
		if err := t.PutRecord(recKey, &rec); err != nil {
			return err
		}
		return t.PutIndex(barrier.Tenant(tid).Expiry(rec.ExpiresAt, kindIdempotency, unit.KeyID(recKey.String())))
	})
	if err != nil {
		return nil, false, err
	}
	if public {
		resp, err := run(ctx)
		return resp, false, err
	}
	if kept != nil {
		return kept, true, nil
	}

	done := false
	defer func() {
		if !done { // run panicked: release the key, then go on panicking
			v.finishIdempotent(ctx, recKey, tid, claim, nil)
		}
	}()
	runCtx, cancel := context.WithTimeout(ctx, IdempotencyLease)
	resp, err = run(runCtx)
	cancel()
	done = true
	if err != nil || resp == nil || !idempotencyStorable(resp.Status) {
		v.finishIdempotent(ctx, recKey, tid, claim, nil)
		return resp, false, err
	}
	v.finishIdempotent(ctx, recKey, tid, claim, resp)
	return resp, false, nil
}

// finishIdempotent keeps resp as the answer of the claimed key, or with
// resp nil releases the key. A claim taken over meanwhile (the lease ran
// out) is left to its new holder. Failures are logged: the caller still
// gets its response, and the claim ends with its lease.
func (v *Vault) finishIdempotent(ctx context.Context, recKey barrier.Key, tid, claim string, resp *IdempotentResponse) {
	err := v.update(context.WithoutCancel(ctx), func(t *txn) error {
		var rec idempotency.Record
		found, err := t.GetRecord(recKey, &rec)
		if err != nil || !found || rec.Claim != claim {
			return err
		}
		if resp == nil {
			if err := t.Delete(barrier.Tenant(tid).Expiry(rec.ExpiresAt, kindIdempotency, unit.KeyID(recKey.String()))); err != nil {
				return err
			}
			return t.Delete(recKey)
		}
		rec.Claim, rec.LeaseUntil, rec.Response = "", time.Time{}, resp
		return t.PutRecord(recKey, &rec)
	})
	if err != nil {
		v.logger.Error("tokenvault: an idempotency record could not be finished; it is released when its lease ends", "tenant", tid, "err", err)
	}
}

// sweepIdempotency removes an idempotency record whose window is over.
func (t *txn) sweepIdempotency(tid, id string) (bool, error) {
	k := barrier.Tenant(tid).Record(kindIdempotency, id)
	var rec idempotency.Record
	found, err := t.GetRecord(k, &rec)
	if err != nil || !found || !rec.Expired(t.Now) {
		return false, err
	}
	return true, t.Delete(k)
}
