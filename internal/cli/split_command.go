package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault/httpapi"
)

const operatorUsage = `Usage: tokenvault operator split-init [flags] -k K -recipients FILE -out DIR
       tokenvault operator unseal [flags] -share FILE -identity FILE
       tokenvault operator seal-status [flags]
       tokenvault operator rekey [rotate-master-key flags] -split-share FILE -split-identity FILE ...
                                 -split-k K -split-recipients FILE -split-out DIR

The split root of trust (-seal split): the root key exists only as n
shares, each encrypted to one custodian's age recipient (age1...), and k
of them unseal the server at every start. No person alone can open the
store: split knowledge and dual control.

split-init makes the root key of a new data directory (no store yet) and
splits it: one age-encrypted share file per custodian in DIR, and the
public description (k, n, the custodians, the key id that checks the
key) in <data>/split.json. The key itself is never written. For a store
that exists, use rotate-master-key -to split instead.

unseal decrypts one custodian's share file with their age identity, in
memory only, and submits it to a running server started with -seal split
(POST /operator/unseal, operator key); it prints how many shares the
server has and needs. The server opens once k different custodians have
unsealed it.

seal-status prints whether the server is sealed and how many shares it
has (GET /operator/seal-status).

rekey is rotate-master-key -seal split -to split: with the server
stopped, k current custodians give their share files and identities
(-split-share and -split-identity, in pairs); a new root key is made and
split among the custodians of -split-recipients (a new k with -split-k),
and every keyring is re-wrapped under it without decrypting any data.
The old shares no longer open the store (a custodian who left holds
nothing useful); backups taken before still need k of them.`

// operatorCommand runs operator split-init, unseal, seal-status or rekey.
func operatorCommand(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprintln(out, operatorUsage)
			return nil
		}
		return usageError{errors.New("operator needs a subcommand: split-init, unseal, seal-status or rekey (tokenvault operator -h)")}
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "split-init":
		return splitInitCommand(args, getenv, out)
	case "unseal", "seal-status":
		return unsealCommand(ctx, sub, args, getenv, out)
	case "rekey":
		return rotateMasterKeyCommand(ctx, append([]string{"-seal", sealSplit, "-to", sealSplit}, args...), getenv, out, errOut)
	}
	return usageError{fmt.Errorf("unknown operator subcommand %q: split-init, unseal, seal-status or rekey", sub)}
}

// splitInitCommand makes the split root key of a new data directory.
func splitInitCommand(args []string, getenv func(string) string, out io.Writer) error {
	fl := newFlagSet("operator split-init", operatorUsage)
	fl.SetOutput(out)
	var dataDir, recipients, outDir string
	var k int
	fl.StringVar(&dataDir, "data", "data", "data `directory` of the server to be (its split.json is written there)")
	fl.Bind("data", "TOKENVAULT_DATA")
	fl.IntVar(&k, "k", 0, "how many custodians' shares unseal the server (2 to the number of custodians; required)")
	fl.StringVar(&recipients, "recipients", "", "`file` of the custodians, one a line: NAME age1... (required)")
	fl.StringVar(&outDir, "out", "", "`directory` to write the share files to, one per custodian (required)")
	if err := fl.parse(args, getenv); err != nil {
		return err
	}
	if k == 0 || recipients == "" || outDir == "" || fl.NArg() > 0 {
		return usageError{errors.New("operator split-init takes -k K -recipients FILE -out DIR (and -data DIR), and no argument")}
	}
	for _, name := range []string{splitFileName, pendingSplitFile, "vault.db", "master.key"} {
		if _, err := os.Stat(filepath.Join(dataDir, name)); err == nil {
			return fmt.Errorf("%s holds %s: split-init is for a new data directory; a store that exists moves to a split root key with rotate-master-key -to split (stop the server first)", dataDir, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	cs, rs, err := readRecipients(recipients)
	if err != nil {
		return err
	}
	if k < 2 || k > len(cs) {
		return usageError{fmt.Errorf("-k must be within 2 and the number of custodians (%d), not %d", len(cs), k)}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	key, d, files, err := newSplit(k, cs, rs, outDir)
	if err != nil {
		return err
	}
	clear(key) // from now on it exists only as the shares
	if err := writeSplitDescription(splitDescriptionPath(dataDir), d); err != nil {
		return err
	}
	for i, f := range files {
		fmt.Fprintf(out, "%s: %s\n", cs[i].Name, f)
	}
	fmt.Fprintf(out, "split root key %s %d of %d into the share files above (hand each to its custodian; only their age identity decrypts it),\ndescribed in %s; start the server with: tokenvault serve -data %s -seal split\n",
		d.KeyID, d.K, d.N, splitDescriptionPath(dataDir), dataDir)
	return nil
}

// unsealCommand submits a share (unseal) or asks the status.
func unsealCommand(ctx context.Context, sub string, args []string, getenv func(string) string, out io.Writer) error {
	var o operatorFlags
	fl := newOperatorFlagSet("operator "+sub, operatorUsage, &o)
	fl.SetOutput(out)
	var shareFile, identityFile string
	if sub == "unseal" {
		fl.StringVar(&shareFile, "share", "", "the custodian's share `file` (age-encrypted; required)")
		fl.StringVar(&identityFile, "identity", "", "the custodian's age identity `file` (AGE-SECRET-KEY-1...; required)")
	}
	if err := fl.parse(args, getenv); err != nil {
		return err
	}
	if fl.NArg() > 0 || (sub == "unseal" && (shareFile == "" || identityFile == "")) {
		return usageError{fmt.Errorf("operator %s takes %sno argument", sub, map[bool]string{true: "-share FILE -identity FILE and ", false: ""}[sub == "unseal"])}
	}
	_, key, err := o.connect(getenv)
	if err != nil {
		return err
	}
	method, path := "GET", "/operator/seal-status"
	var body []byte
	if sub == "unseal" {
		text, err := decryptShareFile(shareFile, identityFile)
		if err != nil {
			return err
		}
		// The text itself, not JSON: no string of it is made (strings
		// cannot be cleared).
		body = text
		defer clear(body)
		method, path = "POST", "/operator/unseal"
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(o.server, "/")+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("-server: %w", err)
	}
	req.Header.Set(httpapi.APIKeyHeader, string(key))
	req.Header.Set("Content-Type", "text/plain")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return o.explain(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode != http.StatusOK {
		var p httpapi.Problem
		if json.Unmarshal(b, &p) == nil && p.Detail != "" {
			if res.StatusCode == http.StatusUnauthorized {
				return fmt.Errorf("%s: the server refused the operator key from %s", p.Detail, o.keyFrom)
			}
			if res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusMethodNotAllowed {
				return fmt.Errorf("the server at %s has no %s: was it started with -seal split?", o.server, path)
			}
			return errors.New(p.Detail)
		}
		return fmt.Errorf("the server answered %s", res.Status)
	}
	var st sealStatus
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("the server's answer is not a seal status: %w", err)
	}
	if st.Sealed {
		fmt.Fprintf(out, "sealed: %d of %d shares (root key %s, %d custodians)\n", st.Have, st.Need, st.KeyID, st.N)
	} else {
		fmt.Fprintf(out, "unsealed (root key %s, %d of %d custodians)\n", st.KeyID, st.Need, st.N)
	}
	return nil
}
