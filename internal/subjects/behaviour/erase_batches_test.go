package subjects_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/store/memory"
)

// TestEraseSubjectInBatches: a subject with more tokens than one
// transaction of an erasure removes (1,000) is erased whole, over several
// transactions: the certificate counts every token, each is gone, and
// erasing again answers the same certificate.
func TestEraseSubjectInBatches(t *testing.T) {
	e := subjectEnv(t, memory.New(), memory.New())
	importer := e.App(t, tokenvault.Private, tokenvault.PermTokenImport, tokenvault.PermTokenCreate)
	const n = 1001
	var ids []string
	for _, chunk := range []int{tokenvault.MaxImportBatch, n - tokenvault.MaxImportBatch} {
		var lines []tokenvault.ImportLine
		for range chunk {
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", len(ids))
			ids = append(ids, id)
			lines = append(lines, tokenvault.ImportLine{ID: id, Type: "token", Data: []byte(`"v"`), Subject: "many"})
		}
		res, err := e.V.ImportTokens(ctx, importer.Key, tokenvault.ImportBatch{Lines: lines})
		if err != nil || res.Imported != chunk {
			t.Fatalf("ImportTokens = %+v, %v", res, err)
		}
	}
	cert, err := e.V.EraseSubject(ctx, e.Mgmt, "many")
	if err != nil || cert.Tokens != n {
		t.Fatalf("EraseSubject = %+v, %v; want a certificate of %d tokens", cert, err, n)
	}
	reader := e.Revealer(t, tokenvault.PermTokenRead)
	for _, id := range []string{ids[0], ids[999], ids[1000]} {
		if _, err := e.V.GetToken(ctx, reader.Key, id); !errors.Is(err, tokenvault.ErrNotFound) {
			t.Errorf("GetToken(%s) after the erasure = %v, want NotFound", id, err)
		}
	}
	again, err := e.V.EraseSubject(ctx, e.Mgmt, "many")
	if err != nil || again.ID != cert.ID {
		t.Errorf("EraseSubject again = %+v, %v; want the same certificate %s", again, err, cert.ID)
	}
}
