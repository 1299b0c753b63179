package cli

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRotationKeepsOlderBackupsRestorable: rotate-master-key keeps the key
// it replaces as master.key.<key id> (0600) and says which backups need it
// and how to restore them; restore of a backup taken before the rotation,
// given the current key, is refused naming both key ids and
// -master-key-file, and given the kept key restores a store that serves
// the token.
func TestRotationKeepsOlderBackupsRestorable(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := start(t, dir, nil)
	app := createRevealApp(t, addr, readManagementKey(t, dir))
	id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("kept value")), -1)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("tokenize: %d %s %v", status, answer, err)
	}
	backup := filepath.Join(t.TempDir(), "before-rotation.backup")
	env := map[string]string{"TOKENVAULT_SERVER": "http://" + addr}
	if code, out, errOut := runCLI(t, env, "backup", "-operator-key-file", filepath.Join(dir, "operator.key"), "-o", backup); code != 0 {
		t.Fatalf("backup = %d %q %q", code, out, errOut)
	}
	stop()

	oldKey := readMasterKey(t, filepath.Join(dir, "master.key"))
	oldID := localKeyID(oldKey)
	code, out, errOut := runCLI(t, nil, "rotate-master-key", "-data", dir)
	if code != 0 {
		t.Fatalf("rotate-master-key = %d %q %q", code, out, errOut)
	}
	kept := filepath.Join(dir, "master.key."+oldID)
	newID := localKeyID(readMasterKey(t, filepath.Join(dir, "master.key")))
	for _, want := range []string{"previous_key_id=" + oldID, "previous_key_file=" + kept, "key_id=" + newID, "-master-key-file " + kept, "backups taken before now need the previous key"} {
		if !strings.Contains(out, want) {
			t.Errorf("rotate-master-key's log does not say %q:\n%s", want, out)
		}
	}
	if fi, err := os.Stat(kept); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the previous key file %s: %v, %v; want it, 0600", kept, fi, err)
	}
	if !bytes.Equal(readMasterKey(t, kept), oldKey) {
		t.Fatal("the kept file does not hold the previous key")
	}

	// The current key does not open the older backup: restore says which
	// key it needs and how to give it.
	restored := filepath.Join(t.TempDir(), "restored")
	code, _, errOut = runCLI(t, nil, "restore", "-i", backup, "-data", restored, "-master-key-file", filepath.Join(dir, "master.key"))
	if code != 1 || !strings.Contains(errOut, "master key "+oldID) || !strings.Contains(errOut, newID) || !strings.Contains(errOut, "-master-key-file") || !strings.Contains(errOut, "master.key."+oldID) {
		t.Errorf("restore of an older backup with the current key = %d %q, want a refusal naming %s, %s and -master-key-file", code, errOut, oldID, newID)
	}
	code, out, errOut = runCLI(t, nil, "restore", "-i", backup, "-data", restored, "-master-key-file", kept)
	if code != 0 || !strings.Contains(out, "master key "+oldID) {
		t.Fatalf("restore with the kept key = %d %q %q", code, out, errOut)
	}
	addr, _, stop = start(t, restored, nil)
	defer stop()
	if status, body := get(t, "http://"+addr+"/tokens/"+id, app); status != 200 || !strings.Contains(body, "kept value") {
		t.Errorf("the token in the restored older backup: %d %s", status, body)
	}
}

// TestRotationCrashLeftovers: a kill -9 during a rotation leaves
// master.key.new.tmp* (before the pending key was whole) and perhaps
// master.key.new; the next run removes the first, finishes with the
// second, and keeps the replaced key.
func TestRotationCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	_, _, stop := start(t, dir, nil)
	stop()
	oldKey := readMasterKey(t, filepath.Join(dir, "master.key"))
	partial := filepath.Join(dir, pendingKeyFile+".tmp1234567")
	keptPartial := filepath.Join(dir, "master.key."+localKeyID(oldKey)+".tmp7654321")
	for _, f := range []string{partial, keptPartial} {
		if err := os.WriteFile(f, []byte("0a1b2c"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("temporary files only: serve removes them", func(t *testing.T) {
		_, out, stop := start(t, dir, nil)
		stop()
		for _, f := range []string{partial, keptPartial} {
			if _, err := os.Stat(f); !os.IsNotExist(err) {
				t.Errorf("%s is left after a start: %v", f, err)
			}
		}
		if !strings.Contains(out.String(), "removed what an interrupted master key rotation left") {
			t.Errorf("the log does not say what was removed:\n%s", out)
		}
		if !bytes.Equal(readMasterKey(t, filepath.Join(dir, "master.key")), oldKey) {
			t.Error("master.key changed")
		}
	})

	t.Run("pending key and a temporary file: rotate-master-key finishes", func(t *testing.T) {
		if err := os.WriteFile(partial, []byte("0a1b"), 0o600); err != nil {
			t.Fatal(err)
		}
		pending := writeKey(t, filepath.Join(dir, pendingKeyFile))
		if code, out, errOut := runCLI(t, nil, "rotate-master-key", "-data", dir); code != 0 {
			t.Fatalf("rotate-master-key = %d %q %q", code, out, errOut)
		}
		for _, f := range []string{partial, filepath.Join(dir, pendingKeyFile)} {
			if _, err := os.Stat(f); !os.IsNotExist(err) {
				t.Errorf("%s is left: %v", f, err)
			}
		}
		if !bytes.Equal(readMasterKey(t, filepath.Join(dir, "master.key")), pending) {
			t.Error("master.key is not the pending key")
		}
		if !bytes.Equal(readMasterKey(t, filepath.Join(dir, "master.key."+localKeyID(oldKey))), oldKey) {
			t.Error("the replaced key was not kept under its id")
		}
	})
}

// readMasterKey reads a master key file.
func readMasterKey(t *testing.T, path string) []byte {
	t.Helper()
	k, err := readMasterKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
