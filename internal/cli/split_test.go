package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"filippo.io/age"
)

// custodians makes n age identities in dir (names prefix-1...) and returns
// the custodians file and each identity's file, in order.
func custodians(t *testing.T, dir, prefix string, n int) (recipients string, identities []string) {
	t.Helper()
	var list strings.Builder
	list.WriteString("# the custodians\n")
	for i := range n {
		id, err := age.GenerateX25519Identity()
		if err != nil {
			t.Fatal(err)
		}
		name := prefix + "-" + string(rune('1'+i))
		f := filepath.Join(dir, name+".identity")
		if err := os.WriteFile(f, []byte(id.String()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		identities = append(identities, f)
		list.WriteString(name + " " + id.Recipient().String() + "\n")
	}
	recipients = filepath.Join(dir, prefix+".recipients")
	if err := os.WriteFile(recipients, []byte(list.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return recipients, identities
}

// shareFiles lists the share files of dir in custodian order.
func shareFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.share.age"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no share files in %s: %v", dir, err)
	}
	sort.Strings(files)
	return files
}

// splitInit runs operator split-init on data with k of the custodians of
// recipients, writing the shares to out.
func splitInit(t *testing.T, data, k, recipients, out string) {
	t.Helper()
	if code, stdout, stderr := runCLI(t, nil, "operator", "split-init", "-data", data, "-k", k, "-recipients", recipients, "-out", out); code != 0 {
		t.Fatalf("split-init = %d\n%s%s", code, stdout, stderr)
	}
}

// plainShare decrypts a share file as its custodian would.
func plainShare(t *testing.T, shareFile, identity string) string {
	t.Helper()
	b, err := decryptShareFile(shareFile, identity)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// submit posts a share's text to /operator/unseal.
func submit(t *testing.T, addr, operatorKey, text string) (int, sealStatus, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"share": text})
	code, answer := postJSON(t, addr, "/operator/unseal", operatorKey, string(body))
	var st sealStatus
	json.Unmarshal([]byte(answer), &st)
	return code, st, answer
}

func operatorKeyOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, operatorKeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// assertSealed checks a sealed server's answers: readyz 503 naming the
// shares it has, healthz 200, a data call 503 with a problem.
func assertSealed(t *testing.T, addr string, have int, need int) {
	t.Helper()
	if code, body := get(t, "http://"+addr+"/readyz", ""); code != 503 || !strings.Contains(body, "sealed") || !strings.Contains(body, fmt.Sprintf("%d of %d shares", have, need)) {
		t.Errorf("GET /readyz while sealed = %d %q, want 503 sealed: %d of %d", code, body, have, need)
	}
	if code, _ := get(t, "http://"+addr+"/healthz", ""); code != 200 {
		t.Errorf("GET /healthz while sealed = %d, want 200", code)
	}
	res, err := http.Get("http://" + addr + "/applications")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("GET /applications while sealed = %d %s, want 503 problem+json", res.StatusCode, res.Header.Get("Content-Type"))
	}
	code, body := postJSON(t, addr, "/tokens", "any key", `{}`)
	if code != 503 || !strings.Contains(body, "the vault is sealed") {
		t.Errorf("POST /tokens while sealed = %d %s", code, body)
	}
}

// TestSplitUnsealOverHTTP: a server of a 2-of-3 split starts sealed; one
// custodian cannot unseal it (the same share twice counts once); a second
// unseals it (by the operator unseal command); data written then reads
// back after a restart, which seals again; no share reaches the log.
func TestSplitUnsealOverHTTP(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	data, sharesDir := filepath.Join(dir, "data"), filepath.Join(dir, "shares")
	recipients, ids := custodians(t, keys, "custodian", 3)
	splitInit(t, data, "2", recipients, sharesDir)
	shares := shareFiles(t, sharesDir)
	if len(shares) != 3 {
		t.Fatalf("%d share files, want 3", len(shares))
	}
	if _, err := os.Stat(filepath.Join(data, "master.key")); err == nil {
		t.Fatal("split-init wrote a master key")
	}
	texts := []string{plainShare(t, shares[0], ids[0]), plainShare(t, shares[1], ids[1]), plainShare(t, shares[2], ids[2])}

	addr, out, stop := startWith(t, data, nil, "-seal", "split")
	opKey := operatorKeyOf(t, data)
	assertSealed(t, addr, 0, 2)
	if code, _, _ := submit(t, addr, "wrong operator key 0123456789", texts[0]); code != 401 {
		t.Errorf("unseal with a wrong operator key = %d, want 401", code)
	}
	code, st, body := submit(t, addr, opKey, texts[0])
	if code != 200 || !st.Sealed || st.Have != 1 || st.Need != 2 {
		t.Fatalf("first share = %d %s", code, body)
	}
	if strings.Contains(body, strings.Fields(texts[0])[len(strings.Fields(texts[0]))-1]) {
		t.Error("the answer holds the share")
	}
	// One custodian alone, even twice, does not unseal.
	if code, st, body := submit(t, addr, opKey, texts[0]); code != 200 || !st.Sealed || st.Have != 1 {
		t.Fatalf("the same share again = %d %s, want still 1 of 2", code, body)
	}
	assertSealed(t, addr, 1, 2)
	if code, body := get(t, "http://"+addr+"/operator/seal-status", opKey); code != 200 || !strings.Contains(body, `"sealed":true`) || !strings.Contains(body, `"have":1`) {
		t.Errorf("seal-status = %d %s", code, body)
	}

	// The second custodian, with the command.
	operatorKeyFile := filepath.Join(data, operatorKeyFileName)
	code2, stdout, stderr := runCLI(t, nil, "operator", "unseal", "-server", "http://"+addr, "-operator-key-file", operatorKeyFile, "-share", shares[2], "-identity", ids[2])
	if code2 != 0 || !strings.Contains(stdout, "unsealed") {
		t.Fatalf("operator unseal = %d\n%s%s", code2, stdout, stderr)
	}
	if code, body := get(t, "http://"+addr+"/readyz", ""); code != 200 {
		t.Fatalf("readyz after unseal = %d %s", code, body)
	}
	if code, _, body := submit(t, addr, opKey, texts[1]); code != 409 {
		t.Errorf("unseal of an unsealed vault = %d %s, want 409", code, body)
	}
	app := createRevealApp(t, addr, readManagementKey(t, data))
	id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("split secret")), -1)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("tokenize: %d %s %v", status, answer, err)
	}
	stop()

	// A restart seals again; two other custodians unseal it.
	addr, out2, stop := startWith(t, data, nil, "-seal", "split")
	assertSealed(t, addr, 0, 2)
	if code, _ := get(t, "http://"+addr+"/tokens/"+id, app); code != 503 {
		t.Errorf("a data call after restart = %d, want 503 (sealed)", code)
	}
	submit(t, addr, opKey, texts[1])
	if code, st, body := submit(t, addr, opKey, strings.Fields(texts[0])[8]); code != 200 || st.Sealed { // the base64 line alone
		t.Fatalf("second share after restart = %d %s", code, body)
	}
	if status, body := get(t, "http://"+addr+"/tokens/"+id, app); status != 200 || !strings.Contains(body, "split secret") {
		t.Fatalf("GET /tokens/{id} after unseal = %d %s", status, body)
	}
	stop()

	// No share, in any form, reached the log.
	logs := out.String() + out2.String()
	for _, text := range texts {
		b64 := strings.Fields(text)[8]
		raw, _ := base64.StdEncoding.DecodeString(b64)
		for _, form := range []string{b64, base64.RawStdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw), string(raw[1:])} {
			if strings.Contains(logs, form) {
				t.Fatalf("a share reached the log:\n%s", logs)
			}
		}
	}
	if !strings.Contains(logs, "unsealed") || !strings.Contains(logs, "sealed") {
		t.Errorf("the log does not say sealed and unsealed:\n%s", logs)
	}
}

// TestSplitWrongShareRefused: a share of another split does not count,
// two shares that do not make the root key are refused and dropped, and
// nothing opens; then the right shares still unseal.
func TestSplitWrongShareRefused(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	data, other := filepath.Join(dir, "data"), filepath.Join(dir, "other")
	recipients, ids := custodians(t, keys, "custodian", 3)
	splitInit(t, data, "2", recipients, filepath.Join(dir, "shares"))
	splitInit(t, other, "2", recipients, filepath.Join(dir, "other-shares"))
	mine, theirs := shareFiles(t, filepath.Join(dir, "shares")), shareFiles(t, filepath.Join(dir, "other-shares"))
	good0, good1 := plainShare(t, mine[0], ids[0]), plainShare(t, mine[1], ids[1])
	foreign := plainShare(t, theirs[1], ids[1])

	addr, _, stop := startWith(t, data, nil, "-seal", "split")
	defer stop()
	opKey := operatorKeyOf(t, data)
	submit(t, addr, opKey, good0)
	// With its header, a share of another root key is refused alone.
	if code, _, body := submit(t, addr, opKey, foreign); code != 400 || !strings.Contains(body, "share of root key") {
		t.Fatalf("a foreign share = %d %s, want 400", code, body)
	}
	if _, st, _ := submit(t, addr, opKey, good0); st.Have != 1 {
		t.Fatalf("after a foreign share: have %d, want 1 (kept)", st.Have)
	}
	// Without it (the base64 line alone), it combines into a wrong key:
	// refused, and every gathered share dropped.
	code, st, body := submit(t, addr, opKey, strings.Fields(foreign)[8])
	if code != 400 || !strings.Contains(body, "do not combine") || !strings.Contains(body, "dropped") {
		t.Fatalf("a wrong combination = %d %s, want 400", code, body)
	}
	if _, st, _ = submit(t, addr, opKey, "not a share"); st.Have != 0 {
		t.Fatalf("after a wrong combination: have %d, want 0", st.Have)
	}
	assertSealed(t, addr, 0, 2)
	// Two different shares of one number: one is wrong; all are dropped.
	submit(t, addr, opKey, good0)
	tampered := []byte(strings.Fields(good0)[8])
	raw, _ := base64.StdEncoding.DecodeString(string(tampered))
	raw[3] ^= 1
	if code, _, body := submit(t, addr, opKey, base64.StdEncoding.EncodeToString(raw)); code != 400 || !strings.Contains(body, "dropped") {
		t.Fatalf("a conflicting share = %d %s, want 400", code, body)
	}
	assertSealed(t, addr, 0, 2)
	// The right ones still unseal.
	submit(t, addr, opKey, good1)
	if code, st, body := submit(t, addr, opKey, good0); code != 200 || st.Sealed {
		t.Fatalf("the right shares = %d %s", code, body)
	}
}

// TestSplitRekeyAndMoves: a store under a local master key moves to a
// split (rotate-master-key -to split: master.key removed); a rekey to new
// custodians and a new k makes a new root key, so the old shares stop
// working and the new ones unseal, the data intact; a move back to local
// (-to local, with k shares) retires the split.
func TestSplitRekeyAndMoves(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	data := filepath.Join(dir, "data")
	addr, _, stop := start(t, data, nil)
	opKey := operatorKeyOf(t, data)
	app := createRevealApp(t, addr, readManagementKey(t, data))
	id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("moved secret")), -1)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("tokenize: %d %s %v", status, answer, err)
	}
	stop()
	reads := func(t *testing.T, addr string) {
		t.Helper()
		if status, body := get(t, "http://"+addr+"/tokens/"+id, app); status != 200 || !strings.Contains(body, "moved secret") {
			t.Fatalf("GET /tokens/{id} = %d %s", status, body)
		}
	}

	// local -> split, 2 of 2.
	oldRecipients, oldIDs := custodians(t, keys, "old", 2)
	oldDir := filepath.Join(dir, "old-shares")
	if code, out, errOut := runCLI(t, nil, "rotate-master-key", "-data", data, "-to", "split", "-split-k", "2", "-split-recipients", oldRecipients, "-split-out", oldDir); code != 0 {
		t.Fatalf("rotate-master-key -to split = %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, "master.key")); err == nil {
		t.Fatal("master.key is left after a move to split")
	}
	old := shareFiles(t, oldDir)
	oldTexts := []string{plainShare(t, old[0], oldIDs[0]), plainShare(t, old[1], oldIDs[1])}
	addr, _, stop = startWith(t, data, nil, "-seal", "split")
	submit(t, addr, opKey, oldTexts[0])
	if code, st, body := submit(t, addr, opKey, oldTexts[1]); code != 200 || st.Sealed {
		t.Fatalf("unseal after the move = %d %s", code, body)
	}
	reads(t, addr)
	stop()

	// Rekey: 3 new custodians, k 3, given the 2 old shares.
	newRecipients, newIDs := custodians(t, keys, "new", 3)
	newDir := filepath.Join(dir, "new-shares")
	args := []string{"operator", "rekey", "-data", data, "-split-share", old[0], "-split-identity", oldIDs[0], "-split-share", old[1], "-split-identity", oldIDs[1],
		"-split-k", "3", "-split-recipients", newRecipients, "-split-out", newDir}
	if code, out, errOut := runCLI(t, nil, args...); code != 0 {
		t.Fatalf("operator rekey = %d\n%s%s", code, out, errOut)
	}
	fresh := shareFiles(t, newDir)
	addr, _, stop = startWith(t, data, nil, "-seal", "split")
	// The old shares no longer count, with their header or without.
	if code, _, body := submit(t, addr, opKey, oldTexts[0]); code != 400 {
		t.Errorf("an old share after the rekey = %d %s, want 400", code, body)
	}
	submit(t, addr, opKey, strings.Fields(oldTexts[0])[8])
	submit(t, addr, opKey, strings.Fields(oldTexts[1])[8])
	if code, st, body := submit(t, addr, opKey, plainShare(t, fresh[2], newIDs[2])); code != 400 || !st.Sealed && st.Have != 0 {
		t.Errorf("old shares and one new = %d %s, want 400 (they do not make the root key)", code, body)
	}
	assertSealed(t, addr, 0, 3)
	for i, f := range fresh {
		code, st, body := submit(t, addr, opKey, plainShare(t, f, newIDs[i]))
		if code != 200 || st.Sealed != (i < 2) {
			t.Fatalf("new share %d = %d %s", i+1, code, body)
		}
	}
	reads(t, addr)
	stop()

	// split -> local.
	args = []string{"rotate-master-key", "-data", data, "-seal", "split", "-to", "local", "-split-share", fresh[0], "-split-identity", newIDs[0], "-split-share", fresh[1], "-split-identity", newIDs[1]}
	if code, out, errOut := runCLI(t, nil, args...); code == 0 {
		t.Fatalf("a move from a 3-of-3 split with 2 shares succeeded\n%s%s", out, errOut)
	}
	args = append(args, "-split-share", fresh[2], "-split-identity", newIDs[2])
	if code, out, errOut := runCLI(t, nil, args...); code != 0 {
		t.Fatalf("rotate-master-key -seal split -to local = %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(splitDescriptionPath(data)); err == nil {
		t.Error("split.json is left after a move to local")
	}
	addr, _, stop = start(t, data, nil)
	reads(t, addr)
	stop()
}

// TestSplitSealedOperatorKeyAndMetrics: while sealed, wrong operator keys
// are limited per address as when open (-auth-failures-per-minute), the
// right one is always served, and /metrics answers.
func TestSplitSealedOperatorKeyAndMetrics(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	data := filepath.Join(dir, "data")
	recipients, _ := custodians(t, keys, "custodian", 2)
	splitInit(t, data, "2", recipients, filepath.Join(dir, "shares"))
	addr, _, stop := startWith(t, data, nil, "-seal", "split", "-auth-failures-per-minute", "2")
	defer stop()
	for i, want := range []int{401, 401, 429, 429} {
		if code, _ := get(t, "http://"+addr+"/operator/seal-status", "a wrong operator key!"); code != want {
			t.Errorf("wrong operator key, try %d = %d, want %d", i+1, code, want)
		}
	}
	if code, body := get(t, "http://"+addr+"/operator/seal-status", operatorKeyOf(t, data)); code != 200 || !strings.Contains(body, `"need":2`) {
		t.Errorf("seal-status with the operator key after failures = %d %s", code, body)
	}
	if code, _ := get(t, "http://"+addr+"/metrics", ""); code != 200 {
		t.Errorf("GET /metrics while sealed = %d, want 200", code)
	}
	// A server of no split says how to make one.
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-seal", "split"}, func(string) string { return "" }, io.Discard, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "split-init") {
		t.Errorf("-seal split without split.json = %v", err)
	}
}

// TestSplitBackupRestore: a backup of an unsealed split server restores,
// with k shares and the split's description, into a directory that a
// split server serves once unsealed; too few shares restore nothing.
func TestSplitBackupRestore(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	data, sharesDir := filepath.Join(dir, "data"), filepath.Join(dir, "shares")
	recipients, ids := custodians(t, keys, "custodian", 3)
	splitInit(t, data, "2", recipients, sharesDir)
	shares := shareFiles(t, sharesDir)
	addr, _, stop := startWith(t, data, nil, "-seal", "split")
	opKey := operatorKeyOf(t, data)
	submit(t, addr, opKey, plainShare(t, shares[0], ids[0]))
	submit(t, addr, opKey, plainShare(t, shares[1], ids[1]))
	app := createRevealApp(t, addr, readManagementKey(t, data))
	id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("backed up secret")), -1)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("tokenize: %d %s %v", status, answer, err)
	}
	backup := filepath.Join(dir, "backup.db")
	if code, out, errOut := runCLI(t, map[string]string{"TOKENVAULT_SERVER": "http://" + addr}, "backup", "-operator-key-file", filepath.Join(data, operatorKeyFileName), "-o", backup); code != 0 {
		t.Fatalf("backup = %d\n%s%s", code, out, errOut)
	}
	stop()

	restored := filepath.Join(dir, "restored")
	args := []string{"restore", "-i", backup, "-data", restored, "-seal", "split", "-split-file", splitDescriptionPath(data), "-split-share", shares[2], "-split-identity", ids[2]}
	if code, out, errOut := runCLI(t, nil, args...); code == 0 || !strings.Contains(errOut, "needs 2 shares") {
		t.Fatalf("restore with one share = %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(restored, "vault.db")); err == nil {
		t.Fatal("a restore with one share wrote vault.db")
	}
	args = append(args, "-split-share", shares[0], "-split-identity", ids[0])
	if code, out, errOut := runCLI(t, nil, args...); code != 0 || !strings.Contains(out, "-seal split") {
		t.Fatalf("restore = %d\n%s%s", code, out, errOut)
	}
	addr, _, stop = startWith(t, restored, nil, "-seal", "split")
	defer stop()
	opKey = operatorKeyOf(t, restored)
	submit(t, addr, opKey, plainShare(t, shares[2], ids[2]))
	if code, st, body := submit(t, addr, opKey, plainShare(t, shares[1], ids[1])); code != 200 || st.Sealed {
		t.Fatalf("unseal of the restored server = %d %s", code, body)
	}
	if status, body := get(t, "http://"+addr+"/tokens/"+id, app); status != 200 || !strings.Contains(body, "backed up secret") {
		t.Fatalf("GET /tokens/{id} after restore = %d %s", status, body)
	}
}

// TestSplitInterruptedMove: a move to a split interrupted after the
// store's commit (split.json.new not yet renamed, master.key not yet
// removed) is finished by running the same command again, and the shares
// of that run unseal; one interrupted before the commit makes a new split.
func TestSplitInterruptedMove(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	data := filepath.Join(dir, "data")
	_, _, stop := start(t, data, nil)
	stop()
	opKey := operatorKeyOf(t, data)
	masterKey, err := os.ReadFile(filepath.Join(data, "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	recipients, ids := custodians(t, keys, "custodian", 2)
	move := func(t *testing.T, out string) {
		t.Helper()
		if code, stdout, stderr := runCLI(t, nil, "rotate-master-key", "-data", data, "-to", "split", "-split-k", "2", "-split-recipients", recipients, "-split-out", out); code != 0 {
			t.Fatalf("rotate-master-key -to split = %d\n%s%s", code, stdout, stderr)
		}
	}
	// Before the commit: a split.json.new of a key the store never used.
	if err := writeSplitDescription(filepath.Join(data, pendingSplitFile), splitDescription{KeyID: "00000000", K: 2, N: 2, Custodians: []custodian{{X: 1}, {X: 2}}}); err != nil {
		t.Fatal(err)
	}
	move(t, filepath.Join(dir, "shares"))
	// After the commit: put back what the last steps changed.
	if err := os.Rename(splitDescriptionPath(data), filepath.Join(data, pendingSplitFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "master.key"), masterKey, 0o600); err != nil {
		t.Fatal(err)
	}
	move(t, filepath.Join(dir, "shares-again"))
	if _, err := os.Stat(filepath.Join(data, "master.key")); err == nil {
		t.Error("master.key is left after the move was finished")
	}
	// Interrupted later: split.json in place, master.key not yet removed.
	if err := os.WriteFile(filepath.Join(data, "master.key"), masterKey, 0o600); err != nil {
		t.Fatal(err)
	}
	move(t, filepath.Join(dir, "shares-again"))
	if _, err := os.Stat(filepath.Join(data, "master.key")); err == nil {
		t.Error("master.key is left after the second finish")
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "shares-again", "*")); len(files) != 0 {
		t.Errorf("finishing the move made new shares: %v", files)
	}
	shares := shareFiles(t, filepath.Join(dir, "shares"))
	addr, _, stop := startWith(t, data, nil, "-seal", "split")
	defer stop()
	submit(t, addr, opKey, plainShare(t, shares[0], ids[0]))
	if code, st, body := submit(t, addr, opKey, plainShare(t, shares[1], ids[1])); code != 200 || st.Sealed {
		t.Fatalf("unseal after the finished move = %d %s", code, body)
	}
}

// TestSplitInitRefuses: bad custodians files and k, and a data directory
// that has a store or a split already, are refused with what to do, and
// nothing is written.
func TestSplitInitRefuses(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	recipients, _ := custodians(t, keys, "custodian", 3)
	lines, _ := os.ReadFile(recipients)
	first := strings.Split(string(lines), "\n")[1]
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(text), 0o600)
		return f
	}
	data := filepath.Join(dir, "data")
	for _, c := range []struct{ name, k, recipients, want string }{
		{"k too big", "4", recipients, "-k must be within 2"},
		{"k of 1", "1", recipients, "-k must be within 2"},
		{"one custodian", "2", write("one", first+"\n"), "a split needs 2"},
		{"twice", "2", write("twice", first+"\n"+first+"\n"), "listed twice"},
		{"not age", "2", write("bad", "alice ssh-ed25519\nbob age1zzz\n"), "not an age X25519 recipient"},
		{"three words", "2", write("words", "alice x age1zzz\n"), "want NAME"},
	} {
		code, _, errOut := runCLI(t, nil, "operator", "split-init", "-data", data, "-k", c.k, "-recipients", c.recipients, "-out", filepath.Join(dir, "shares"))
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: %d %s, want %q", c.name, code, errOut, c.want)
		}
		if _, err := os.Stat(filepath.Join(data, splitFileName)); err == nil {
			t.Fatalf("%s: split.json written", c.name)
		}
	}
	splitInit(t, data, "2", recipients, filepath.Join(dir, "shares"))
	code, _, errOut := runCLI(t, nil, "operator", "split-init", "-data", data, "-k", "2", "-recipients", recipients, "-out", filepath.Join(dir, "shares2"))
	if code == 0 || !strings.Contains(errOut, "rotate-master-key -to split") {
		t.Errorf("split-init over a split = %d %s", code, errOut)
	}
	local := t.TempDir()
	_, _, stop := start(t, local, nil)
	stop()
	code, _, errOut = runCLI(t, nil, "operator", "split-init", "-data", local, "-k", "2", "-recipients", recipients, "-out", filepath.Join(dir, "shares3"))
	if code == 0 || !strings.Contains(errOut, "rotate-master-key -to split") {
		t.Errorf("split-init over a store = %d %s", code, errOut)
	}
}

// TestParseShare: a share's text, with or without its header (and with
// CRLF), reads; anything else is errBadShare, which quotes nothing.
func TestParseShare(t *testing.T) {
	good := make([]byte, 33)
	good[0] = 3
	good[1] = 0xaa
	b64 := base64.StdEncoding.EncodeToString(good)
	for _, text := range []string{b64, b64 + "\n", shareHeader + " key_id=0a1b2c3d k=2 n=3 x=3\r\n" + b64 + "\r\n"} {
		s, _, err := parseShare([]byte(text))
		if err != nil || !bytes.Equal(s, good) {
			t.Errorf("parseShare(%q) = %x, %v", text, s, err)
		}
	}
	zero := append([]byte{0}, good[1:]...)
	for _, text := range []string{"", "not a share", b64[:20], base64.StdEncoding.EncodeToString(zero), base64.StdEncoding.EncodeToString(append(good, 1)),
		shareHeader + " key_id=<script> k=2 n=3 x=3\n" + b64, "tokenvault split share v2 key_id=0a1b2c3d k=2 n=3 x=3\n" + b64} {
		if _, _, err := parseShare([]byte(text)); err != errBadShare {
			t.Errorf("parseShare(%q) = %v, want errBadShare", text, err)
		}
	}
}
