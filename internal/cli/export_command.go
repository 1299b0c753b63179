package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
)

const exportUsage = `Usage: tokenvault export [-server URL] [-key-file FILE] -recipient AGE-PUBLIC-KEY
                         [-container C] [-type T] [-query Q] -out FILE
       tokenvault export verify -manifest FILE.manifest.json -keys KEYS.json [-identity AGE-IDENTITY-FILE] FILE

Exports the tenant's tokens from a running server (docs/export.md): the
exchange format's NDJSON, one token a line, encrypted to the recipient's
age public key (age1...; the receiving system makes it with age-keygen and
keeps the identity), every live token or those in -container, of -type and
matching -query (the search language of POST /tokens/search). It writes
FILE, the age file, and FILE.manifest.json, the manifest the vault signed
with its audit key (count, SHA-256 of the plaintext and of the file). The
key is a management key holding token:export, read from -key-file or
TOKENVAULT_API_KEY (never a flag's value). FILE appears only once the
export is complete; an export the tenant's approval policy holds prints
its pending change and exits 1: once approved, run the same command with
-approval CHANGE-ID.

verify checks an export where it arrives, without the vault: the
manifest's signature with the vault's public keys (-keys: the JSON of GET
/audit/keys, which tokenvault audit keys prints), FILE's size and SHA-256,
and, with -identity (an age identity file), that FILE decrypts to the
manifest's count of lines and plaintext SHA-256. It exits 1 when anything
differs.`

// exportCommand runs export, or export verify.
func exportCommand(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
	if len(args) > 0 && args[0] == "verify" {
		return exportVerifyCommand(args[1:], getenv, out, errOut)
	}
	fs := newFlagSet("export", exportUsage)
	fs.envOnly = []struct{ name, usage string }{
		{"TOKENVAULT_API_KEY", "a management key holding token:export, instead of -key-file (a secret: no flag)"},
	}
	fs.SetOutput(out)
	var server, keyFile, outFile, approval string
	var req tokenvault.ExportRequest
	fs.StringVar(&server, "server", "http://127.0.0.1:8080", "base `URL` of the running server")
	fs.Bind("server", "TOKENVAULT_SERVER")
	fs.StringVar(&keyFile, "key-file", "", "`file` holding a management key with token:export")
	fs.StringVar(&req.Recipient, "recipient", "", "the recipient's age public `key` (age1...)")
	fs.StringVar(&req.Container, "container", "", "only tokens in this `container` or below it")
	fs.StringVar(&req.Type, "type", "", "only tokens of this `type` (token, card, bank)")
	fs.StringVar(&req.Query, "query", "", "only tokens matching this search `query`")
	fs.StringVar(&outFile, "out", "", "the age `file` to write (and FILE.manifest.json)")
	fs.StringVar(&approval, "approval", "", "the `id` of the applied change that approved this export")
	if err := fs.parse(args, getenv); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("export takes no argument after its flags, not %s", strings.Join(fs.Args(), " "))}
	case outFile == "":
		return usageError{errors.New("export needs -out FILE")}
	case req.Recipient == "":
		return usageError{errors.New("export needs -recipient AGE-PUBLIC-KEY (age1...)")}
	}
	key, err := exportKey(keyFile, getenv)
	if err != nil {
		return err
	}
	// The export is written beside FILE and renamed once complete, so
	// that FILE is never a partial export.
	tmp, err := os.CreateTemp(filepath.Dir(outFile), "."+filepath.Base(outFile)+".partial-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	c := client.New(server, nil)
	var m *tokenvault.ExportManifest
	if approval != "" {
		m, err = c.ExportTokensApproved(ctx, key, approval, req, tmp)
	} else {
		m, err = c.ExportTokens(ctx, key, req, tmp)
	}
	var ar *tokenvault.ApprovalRequired
	if errors.As(err, &ar) {
		fmt.Fprintf(out, "The tenant's approval policy holds exports: change %s waits for approval (until %s).\nOnce it is applied, run the same command with -approval %s.\n",
			ar.Change.ID, ar.Change.ExpiresAt.UTC().Format("2006-01-02 15:04:05 MST"), ar.Change.ID)
		return errors.New("the export waits for approval")
	}
	if err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(outFile+".manifest.json", append(mb, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), outFile); err != nil {
		return err
	}
	fmt.Fprintf(out, "exported %d tokens to %s (%d bytes, sha256 %s)\nexport %s, manifest %s.manifest.json (sha256 of the plaintext %s)\n",
		m.Count, outFile, m.CiphertextSize, m.CiphertextSHA256, m.ID, outFile, m.PlaintextSHA256)
	return nil
}

// exportKey reads the key from keyFile, else TOKENVAULT_API_KEY.
func exportKey(keyFile string, getenv func(string) string) (tokenvault.Credential, error) {
	key := strings.TrimSpace(getenv("TOKENVAULT_API_KEY"))
	if keyFile != "" {
		b, err := os.ReadFile(keyFile)
		if err != nil {
			return "", err
		}
		key = strings.TrimSpace(string(b))
	}
	if key == "" {
		return "", errors.New("no key: give -key-file, or set TOKENVAULT_API_KEY, to a management key holding token:export")
	}
	return tokenvault.Credential(key), nil
}

// exportVerifyCommand runs export verify.
func exportVerifyCommand(args []string, getenv func(string) string, out, errOut io.Writer) error {
	fs := newFlagSet("export verify", exportUsage)
	fs.SetOutput(out)
	var manifestFile, keysFile, identityFile string
	fs.StringVar(&manifestFile, "manifest", "", "the export's manifest `file` (FILE.manifest.json)")
	fs.StringVar(&keysFile, "keys", "", "the vault's public keys, the JSON of GET /audit/keys (`file`)")
	fs.StringVar(&identityFile, "identity", "", "an age identity `file` to decrypt with and check the content")
	if err := fs.parse(args, getenv); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 1:
		return usageError{errors.New("export verify takes one FILE: the export")}
	case manifestFile == "" || keysFile == "":
		return usageError{errors.New("export verify needs -manifest FILE.manifest.json and -keys KEYS.json (tokenvault audit keys prints it)")}
	}
	file := fs.Arg(0)
	var m tokenvault.ExportManifest
	mb, err := os.ReadFile(manifestFile)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(mb, &m); err != nil {
		return fmt.Errorf("%s: not an export manifest: %w", manifestFile, err)
	}
	kb, err := os.ReadFile(keysFile)
	if err != nil {
		return err
	}
	var keys auditKeysFile
	if err := json.Unmarshal(kb, &keys); err != nil || len(keys.Keys) == 0 {
		return fmt.Errorf("%s: not the JSON of GET /audit/keys ({\"keys\": [...]})", keysFile)
	}
	var ids []age.Identity
	if identityFile != "" {
		f, err := os.Open(identityFile)
		if err != nil {
			return err
		}
		ids, err = age.ParseIdentities(f)
		f.Close()
		if err != nil {
			// The parser's error may quote the file: say only which.
			return fmt.Errorf("%s: not an age identity file", identityFile)
		}
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	v, err := tokenvault.VerifyExport(&m, keys.Keys, f, ids...)
	fmt.Fprintf(out, "export %s of tenant %s (%s to %s), signed by key %s\n", m.ID, m.TenantID,
		m.StartedAt.UTC().Format("2006-01-02T15:04:05Z"), m.FinishedAt.UTC().Format("2006-01-02T15:04:05Z"), m.KeyID)
	check := func(what string, ok bool) {
		verdict := "OK"
		if !ok {
			verdict = "FAILED"
		}
		fmt.Fprintf(out, "  %-28s %s\n", what, verdict)
	}
	check("signature", v.Signature)
	if v.Signature {
		check("file size and sha256", v.Ciphertext)
	}
	if len(ids) > 0 && v.Ciphertext {
		check(fmt.Sprintf("content (%d tokens)", m.Count), v.Plaintext)
	}
	if err != nil {
		return fmt.Errorf("%s does not verify: %w", file, err)
	}
	if len(ids) == 0 {
		fmt.Fprintln(out, "  content                      not checked (no -identity)")
	}
	return nil
}
