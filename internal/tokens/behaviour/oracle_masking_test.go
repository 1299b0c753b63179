package tokens_test

import (
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// TestMaskingReadersLearnNoEquality: a key whose token:read masks (or
// redacts) a card, and that may create tokens, tries the guess loop:
// it creates each guessed card, compares its fingerprint with the
// target's (shown by GetToken, ListTokens or a search, or matched by a
// fingerprint filter or term), and creates it deduplicating next to the
// target. It learns nothing: no fingerprint of the target, no match, a
// new token for every guess. A key that reveals still sees fingerprints
// and deduplicates.
func TestMaskingReadersLearnNoEquality(t *testing.T) {
	for _, transform := range []string{"mask", "redact"} {
		t.Run(transform, func(t *testing.T) {
			e := vaulttest.NewEnv(t)
			admin := e.Reader(t, "reveal", "token:create", "token:read")
			stored, err := e.V.CreateToken(ctx, admin.Key, vaulttest.CardRequest(vaulttest.Visa))
			if err != nil || stored.Fingerprint == "" {
				t.Fatalf("admin CreateToken = %+v, %v; want a fingerprint for a revealing reader", stored, err)
			}
			attacker := e.MaskingAttacker(t, transform)

			// What the attacker sees of the target carries no fingerprint.
			got, err := e.V.GetToken(ctx, attacker.Key, stored.ID)
			if err != nil || got.Fingerprint != "" {
				t.Fatalf("GetToken by a %s reader = %+v, %v; want the token without its fingerprint", transform, got, err)
			}
			list, err := e.V.ListTokens(ctx, attacker.Key, tokenvault.ListTokensRequest{Container: "/pci/"})
			if err != nil || len(list.Data) != 1 || list.Data[0].Fingerprint != "" {
				t.Fatalf("ListTokens by a %s reader = %+v, %v; want the card without its fingerprint", transform, list, err)
			}
			found, err := e.V.SearchTokens(ctx, attacker.Key, tokenvault.SearchTokensRequest{Query: "type:card"})
			if err != nil || len(found.Data) != 1 || found.Data[0].Fingerprint != "" {
				t.Fatalf("SearchTokens by a %s reader = %+v, %v; want the card without its fingerprint", transform, found, err)
			}

			seen := map[string]bool{stored.ID: true}
			for i, g := range luhnCandidates(40, vaulttest.Visa, 17) {
				// A guess made where the attacker reveals: its fingerprint
				// is shown, but matches nothing the attacker only masks.
				req := vaulttest.CardRequest(g)
				req.Containers = []string{"/sandbox/"}
				guess, err := e.V.CreateToken(ctx, attacker.Key, req)
				if err != nil || guess.Fingerprint == "" {
					t.Fatalf("CreateToken(guess %d) in /sandbox/ = %+v, %v; want its fingerprint", i, guess, err)
				}
				if (guess.Fingerprint == stored.Fingerprint) != (g == vaulttest.Visa) {
					t.Fatalf("guess %d: fingerprint equality %v, want it only for the right guess (the attack's premise)",
						i, guess.Fingerprint == stored.Fingerprint)
				}
				byFP, err := e.V.ListTokens(ctx, attacker.Key, tokenvault.ListTokensRequest{Fingerprint: guess.Fingerprint})
				if err != nil || len(byFP.Data) != 1 || byFP.Data[0].ID != guess.ID {
					t.Fatalf("ListTokens(fingerprint of guess %d) = %+v, %v; want its own guess only", i, byFP, err)
				}
				term, err := e.V.SearchTokens(ctx, attacker.Key, tokenvault.SearchTokensRequest{Query: "fingerprint:" + guess.Fingerprint})
				if err != nil || len(term.Data) != 1 || term.Data[0].ID != guess.ID {
					t.Fatalf("SearchTokens(fingerprint of guess %d) = %+v, %v; want its own guess only", i, term, err)
				}
				// Deduplicating next to the target: a new token each time.
				dup := vaulttest.CardRequest(g)
				dup.DeduplicateToken = true
				made, err := e.V.CreateToken(ctx, attacker.Key, dup)
				if err != nil || seen[made.ID] || made.Fingerprint != "" {
					t.Fatalf("deduplicating CreateToken(guess %d) = %+v, %v; want a new token without a fingerprint", i, made, err)
				}
				seen[made.ID] = true
				tok, err := e.V.Tokenize(ctx, attacker.Key, guessCard(g, true))
				if err != nil {
					t.Fatalf("Tokenize(guess %d): %v", i, err)
				}
				id := tok.(*tokenvault.Token).ID
				if seen[id] {
					t.Fatalf("deduplicating Tokenize(guess %d) = %s, a token already answered", i, id)
				}
				seen[id] = true
			}

			// A revealing reader keeps fingerprints and deduplication.
			again, err := e.V.CreateToken(ctx, admin.Key, tokenvault.TokenRequest{Type: "card", DeduplicateToken: true,
				Data: vaulttest.CardRequest(vaulttest.Visa).Data})
			if err != nil || again.ID != stored.ID || again.Fingerprint != stored.Fingerprint {
				t.Errorf("dedupe by a revealing reader = %+v, %v; want the stored token with its fingerprint", again, err)
			}
			got, err = e.V.GetToken(ctx, admin.Key, stored.ID)
			if err != nil || got.Fingerprint != stored.Fingerprint {
				t.Errorf("GetToken by a revealing reader = %+v, %v; want the fingerprint", got, err)
			}
			byFP, err := e.V.ListTokens(ctx, admin.Key, tokenvault.ListTokensRequest{Fingerprint: stored.Fingerprint})
			if err != nil || len(byFP.Data) == 0 || byFP.Data[0].ID != stored.ID {
				t.Errorf("ListTokens by fingerprint by a revealing reader = %+v, %v; want the stored token first", byFP, err)
			}
		})
	}
}
