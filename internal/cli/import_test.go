package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/memory"
)

// importServer is a Vault served over HTTP with an importing key, which
// may also read tokens back.
func importServer(t *testing.T) (v *tokenvault.Vault, url string, key tokenvault.Credential) {
	t.Helper()
	ctx := context.Background()
	master := make([]byte, 32)
	rand.Read(master)
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: memory.New(), Keys: tokenvault.KeyOptions{MasterKey: master},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	srv := httptest.NewServer(httpapi.New(v, httpapi.Options{}))
	t.Cleanup(srv.Close)
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{Name: "importer", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenImport, tokenvault.PermTokenCreate, tokenvault.PermTokenRead}})
	if err != nil {
		t.Fatal(err)
	}
	return v, srv.URL, app.Key
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestImportCommandFormats imports a small file of each format through
// the command: the summary counts, the reject file names each bad line
// with its reason and no data, and the tokens read back with their ids.
func TestImportCommandFormats(t *testing.T) {
	v, url, key := importServer(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	writeFile(t, keyFile, string(key)+"\n")
	card := `{"number": "5555555555554444", "expiration_month": 12, "expiration_year": 2035}`
	files := map[string]struct {
		content string
		ids     []string
		rejects string
	}{
		"ndjson": {`{"id": "nd_01", "type": "card", "data": ` + card + `}` + "\n" +
			`{"id": "nd_02", "type": "token", "data": "555555555555444X"` + "\n" +
			`{"id": "nd_5555555555554444", "type": "card", "data": ` + card + `}` + "\n" +
			`{"id": "nd_04", "type": "token", "data": {"a": "b"}, "created_at": "2019-05-06T07:08:09Z"}` + "\n",
			[]string{"nd_01", "nd_04"}, "2\tnot valid JSON\n3\tid: carries the data (see the import id rule)\n"},
		"csv": {"id,type,data,data.number,data.expiration_month,data.expiration_year,metadata.ref,containers\n" +
			"cs_01,card,,5555555555554444,12,2035,r1,/pci/high/;/cards/\n" +
			"cs_02,token,\"{\"\"x\"\": 1}\",,,,r2,\n" +
			"cs_03,card,,5555555555554440,12,2035,,\n",
			[]string{"cs_01", "cs_02"}, "4\tdata.number: "},
		"hosted": {`{"pagination": {"page_number": 1}, "data": [{"id": "ho_01", "type": "token", "data": "x", "tenant_id": "t", "fingerprint": "f", "created_by": "u",` +
			` "privacy": {"classification": "general", "impact_level": "high"}}, {"id": "ho_02", "type": "social_security_number", "data": "111-22-3333"}]}`,
			[]string{"ho_01"}, "2\ttype: must be one of"},
	}
	for format, tc := range files {
		t.Run(format, func(t *testing.T) {
			in := filepath.Join(dir, "in."+format)
			writeFile(t, in, tc.content)
			code, out, errOut := runCLI(t, map[string]string{}, "import", "-server", url, "-key-file", keyFile, "-format", format, in)
			if code != 0 {
				t.Fatalf("import = %d\n%s%s", code, out, errOut)
			}
			var sum importSummary
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				t.Fatalf("import printed %q, want one JSON summary: %v", out, err)
			}
			rejects := strings.Count(tc.rejects, "\n") + map[bool]int{true: 0, false: 1}[strings.HasSuffix(tc.rejects, "\n")]
			if sum.Imported != int64(len(tc.ids)) || sum.Rejected != int64(rejects) {
				t.Errorf("summary = %+v, want %d imported, %d rejected", sum, len(tc.ids), rejects)
			}
			got, err := os.ReadFile(in + ".rejects")
			if err != nil || !strings.HasPrefix(string(got), tc.rejects) || strings.Contains(string(got), "5555") {
				t.Errorf("reject file = %q, %v; want it to start %q, without data", got, err, tc.rejects)
			}
			for _, id := range tc.ids {
				if _, err := v.GetToken(context.Background(), key, id); err != nil {
					t.Errorf("GetToken(%s) = %v", id, err)
				}
			}
			if _, err := os.Stat(in + ".import-state"); !os.IsNotExist(err) {
				t.Errorf("state file after a complete run: %v, want it removed", err)
			}
		})
	}
	tok, err := v.GetToken(context.Background(), key, "cs_01")
	if err != nil || len(tok.Containers) != 2 || tok.Metadata["ref"] != "r1" {
		t.Errorf("GetToken(cs_01) = %+v, %v; want two containers and metadata ref", tok, err)
	}
}

// TestImportCommandStopsAndRefusesAChangedFile: -stop-on-error stops after
// the batch of the first reject, keeping its state; a run on the same
// file goes on from there; a file changed since is refused.
func TestImportCommandStopsAndRefusesAChangedFile(t *testing.T) {
	_, url, key := importServer(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ndjson")
	var b strings.Builder
	for i := range 30 {
		if i == 12 {
			b.WriteString("{\n")
			continue
		}
		b.WriteString(`{"id": "st_` + string(rune('a'+i/10)) + string(rune('a'+i%10)) + `", "type": "token", "data": "v"}` + "\n")
	}
	writeFile(t, in, b.String())
	env := map[string]string{"TOKENVAULT_API_KEY": string(key)}
	code, out, _ := runCLI(t, env, "import", "-server", url, "-batch", "5", "-stop-on-error", in)
	var sum importSummary
	json.Unmarshal([]byte(out), &sum)
	if code != 1 || !sum.Stopped || sum.Imported != 14 || sum.Rejected != 1 {
		t.Fatalf("import -stop-on-error = %d %+v, want 1 and 14 imported, 1 rejected, stopped", code, sum)
	}
	code, out, _ = runCLI(t, env, "import", "-server", url, "-batch", "5", in)
	json.Unmarshal([]byte(out), &sum)
	if code != 0 || sum.Imported != 29 || sum.Rejected != 1 || sum.Resumed != 15 {
		t.Fatalf("import again = %d %s, want 29 imported in all, resumed after line 15", code, out)
	}
	// Stop again, change the file, and resume: refused.
	runCLI(t, env, "import", "-server", url, "-batch", "5", "-stop-on-error", in)
	writeFile(t, in, b.String()+`{"id": "st_zz", "type": "token", "data": "v"}`+"\n")
	if code, _, errOut := runCLI(t, env, "import", "-server", url, in); code != 1 || !strings.Contains(errOut, "changed") {
		t.Errorf("import of a changed file = %d %q, want refused", code, errOut)
	}
	if code, _, errOut := runCLI(t, map[string]string{}, "import", "-server", url, in); code != 1 || !strings.Contains(errOut, "no key") {
		t.Errorf("import without a key = %d %q", code, errOut)
	}
}

// TestImportProgressLine: on a terminal the line shows the counts, the
// rate, the share of the file read and the time left; elsewhere nothing.
func TestImportProgressLine(t *testing.T) {
	var b strings.Builder
	began := time.Now().Add(-10 * time.Second)
	p := newImportProgress(&b, 1000, began, importState{})
	p.show(importState{Imported: 400, Skipped: 50, Rejected: 50}, 250)
	if b.Len() != 0 {
		t.Errorf("progress to a non-terminal = %q, want nothing", b.String())
	}
	p.on = true
	p.show(importState{Imported: 400, Skipped: 50, Rejected: 50}, 250)
	got := b.String()
	for _, want := range []string{"400 imported, 50 skipped, 50 rejected", "/s", "25.0%", "30s left"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress line %q lacks %q", got, want)
		}
	}
}
