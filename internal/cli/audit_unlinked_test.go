package cli

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/auditchain"
)

// TestVerifyPrintsUnlinkedApart: lines committed and not linked yet are
// printed apart as not yet covered, and an OK chain stays OK; without any,
// the line is absent.
func TestVerifyPrintsUnlinkedApart(t *testing.T) {
	r := &auditchain.Report{TenantID: "t1", OK: true, Lines: 8, FirstSeq: 1, LastSeq: 8, Unlinked: 3, Problems: []auditchain.Problem{}}
	var b strings.Builder
	printReport(&b, r)
	out := b.String()
	if !strings.Contains(out, "tenant t1: OK") || !strings.Contains(out, "not yet covered: 3 lines committed and not linked yet") {
		t.Errorf("report with 3 unlinked lines printed\n%s", out)
	}
	r.Unlinked = 0
	b.Reset()
	printReport(&b, r)
	if strings.Contains(b.String(), "not yet covered") {
		t.Errorf("report with none unlinked printed\n%s", b.String())
	}
}
