package tokenvault

import (
	"context"
	"crypto/rand"
	"encoding/hex"

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

// Idempotency limits (internal/idempotency).
const (
	// IdempotencyWindow is how long a response is kept for repeats,
	// counted from the first request.
	IdempotencyWindow = idempotency.Window
	// IdempotencyLease is how long a claim on an idempotency key lasts
	// while its request runs; a request still running then is cancelled,
	// and a repeat after it runs again.
	IdempotencyLease = idempotency.Lease
	// MaxIdempotencyKeyLength bounds an idempotency key: 1 to 255
	// printable ASCII characters (space to tilde).
	MaxIdempotencyKeyLength = idempotency.MaxKeyLength
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
	if err := idempotency.ValidKey(idempotencyKey); err != nil {
		return nil, false, err
	}
	ctx = unit.WithCall(ctx)
	fp := idempotency.Fingerprint(req.Operation, req.Body)
	var c [16]byte
	rand.Read(c[:])
	claim := hex.EncodeToString(c[:])

	var claimed idempotency.Claimed // its Key, for finishIdempotent
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
		claimed, err = idempotency.Claim(t.Tx, p, idempotencyKey, fp, claim)
		kept = claimed.Kept
		return err
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
			v.finishIdempotent(ctx, claimed, tid, claim, nil)
		}
	}()
	runCtx, cancel := context.WithTimeout(ctx, IdempotencyLease)
	resp, err = run(runCtx)
	cancel()
	done = true
	if err != nil || resp == nil || !idempotency.Storable(resp.Status) {
		v.finishIdempotent(ctx, claimed, tid, claim, nil)
		return resp, false, err
	}
	v.finishIdempotent(ctx, claimed, tid, claim, resp)
	return resp, false, nil
}

// finishIdempotent keeps resp as the answer of the key c claimed, or with
// resp nil releases the key (idempotency.Finish). Failures are logged:
// the caller still gets its response, and the claim ends with its lease.
func (v *Vault) finishIdempotent(ctx context.Context, c idempotency.Claimed, tid, claim string, resp *IdempotentResponse) {
	err := v.update(context.WithoutCancel(ctx), func(t *txn) error {
		return idempotency.Finish(t.Tx, c.Key, tid, claim, resp)
	})
	if err != nil {
		v.logger.Error("tokenvault: an idempotency record could not be finished; it is released when its lease ends", "tenant", tid, "err", err)
	}
}
