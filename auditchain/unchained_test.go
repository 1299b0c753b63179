package auditchain_test

import (
	"bytes"
	"testing"

	"github.com/tokenvault/tokenvault/auditchain"
)

// TestVerifyExportFindsUnchainedLinesAfterTheChainBegan: a line of the
// tenant given no link (no seq, prev_hash or hash) is not on the chain,
// so nothing vouches for it; one dated after the chain began was not
// written by the vault (it links every line before exporting it), so it
// is Inserted, while every other reader of the copy would show it. The
// fixture's own unlinked line, dated before the chain began, is not.
func TestVerifyExportFindsUnchainedLinesAfterTheChainBegan(t *testing.T) {
	orig, keys := readFixture(t)
	pre := orig[0] // tenant A's line written before its chain began
	if bytes.Contains(pre, []byte(`"seq"`)) {
		t.Fatalf("the fixture's first line is chained: %s", pre)
	}
	if r := verifyLines(t, orig, fixtureTenantA, keys); !r.OK {
		t.Fatalf("the fixture does not verify: %+v", r.Problems)
	}
	forged := bytes.Replace(pre, []byte(`"message":"Tenant updated"`), []byte(`"message":"FORGED"`), 1)
	forged = bytes.Replace(forged, []byte(`-000000000100"`), []byte(`-0000000001ff"`), 1)
	for _, tc := range []struct {
		name, at string
		inserted bool
	}{
		{"dated after the chain began", "2030-01-02T03:04:07.600000123Z", true},
		{"dated at the chain's first line", "2030-01-02T03:04:05.000000123Z", true},
		{"dated before the chain began", "2030-01-02T03:04:04.000000123Z", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := bytes.Replace(forged, []byte("2030-01-02T03:04:03.750000123Z"), []byte(tc.at), 1)
			lines := append(cloneLines(orig), line)
			r := verifyLines(t, lines, fixtureTenantA, keys)
			if !tc.inserted {
				if !r.OK {
					t.Fatalf("VerifyExport = %+v; want OK (a line before the chain is not on it)", r.Problems)
				}
				return
			}
			if r.OK || len(r.Problems) != 1 || r.Problems[0].Kind != auditchain.Inserted ||
				r.Problems[0].LineID != "0193f1d2-0000-7000-8000-0000000001ff" {
				t.Fatalf("VerifyExport = %+v; want one Inserted problem naming the forged line", r.Problems)
			}
		})
	}
}
