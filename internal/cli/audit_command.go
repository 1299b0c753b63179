package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/client"
)

const auditUsage = `Usage: tokenvault audit verify [flags] [-sign] -tenant TENANT-ID
       tokenvault audit verify -file EXPORT -keys KEYS.json -tenant TENANT-ID [-first N] [-json]
       tokenvault audit keys [flags]
       tokenvault audit rotate-key [flags]
       tokenvault audit verify-certificate -certificate FILE [-keys KEYS.json]

Verifies and administers the hash chain of the audit trail
(docs/audit-chain.md).

verify checks a tenant's chain: with -file, offline, from an audit export
(the JSON lines the -audit-file sink writes; several tenants mixed, in
any order, duplicates and all) and the vault's public keys (-keys: the
JSON of GET /audit/keys, which audit keys prints), without the vault;
without -file, online, asking the running server to walk its store (the
operator key; -sign first has it sign the chain's head, so that every
line written before the call is vouched for and none is left in an
unsigned tail). It prints the report (-json: as JSON) and exits 1 when
anything is wrong: an altered line, a broken link, a missing range, a
forked or reordered line, a bad checkpoint, an unsigned tail. An export
line must be in the canonical form the vault writes, byte for byte (no key
twice or in another case, no unknown field, no other encoding): another
is refused, naming the line. -first 0 accepts a copy starting anywhere,
not one missing the lines its checkpoints vouch for.

keys prints the vault's checkpoint signing keys (public; no key needed),
in the form -keys reads. rotate-key replaces the signing key (the
operator key); the old one stays published, retired, to verify the
checkpoints it signed.

verify-certificate checks an erasure certificate (tokenvault subject
erase prints it; docs/erasure.md): its signature, with -keys offline,
else with the server's keys and, with TOKENVAULT_API_KEY (a management
key of the tenant holding log:read), its presence in the tenant's audit
chain. It exits 1 when the certificate does not verify.`

// auditCommand runs audit verify, keys or rotate-key.
func auditCommand(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprintln(out, auditUsage)
			return nil
		}
		return usageError{errors.New("audit needs a subcommand: verify, verify-certificate, keys or rotate-key (tokenvault audit -h)")}
	}
	sub, args := args[0], args[1:]
	var o operatorFlags
	fs := newOperatorFlagSet("audit "+sub, auditUsage, &o)
	fs.SetOutput(out)
	var tenant, file, keysFile string
	var first uint64
	var asJSON, sign bool
	var certFile string
	switch sub {
	case "verify-certificate":
		fs.StringVar(&certFile, "certificate", "", "the erasure certificate's JSON `file` (required)")
		fs.StringVar(&keysFile, "keys", "", "check offline with the vault's public keys, the JSON of GET /audit/keys (`file`)")
	case "verify":
		fs.StringVar(&tenant, "tenant", "", "the `id` of the tenant whose chain to verify (required)")
		fs.StringVar(&file, "file", "", "verify offline from this audit export `file` instead of the running server")
		fs.StringVar(&keysFile, "keys", "", "with -file: the vault's public keys, the JSON of GET /audit/keys (`file`)")
		fs.Uint64Var(&first, "first", 1, "with -file: the sequence `number` the export must start at (1: the whole chain; 0: wherever it starts, still holding every line its checkpoints vouch for)")
		fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
		fs.BoolVar(&sign, "sign", false, "online: have the server sign the chain's head first (a checkpoint now), so no line is left unsigned")
	case "keys", "rotate-key":
	default:
		return usageError{fmt.Errorf("unknown audit subcommand %q: verify, verify-certificate, keys or rotate-key", sub)}
	}
	if err := fs.parse(args, getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("audit %s takes no argument after its flags, not %s", sub, strings.Join(fs.Args(), " "))}
	}
	switch sub {
	case "verify-certificate":
		if certFile == "" {
			return usageError{errors.New("audit verify-certificate needs -certificate FILE")}
		}
		return verifyCertificate(ctx, certFile, keysFile, o.server, getenv, out)
	case "keys":
		keys, err := client.New(o.server, nil).AuditKeys(ctx)
		if err != nil {
			return o.explain(err)
		}
		return printJSON(out, auditKeysFile{Keys: keys})
	case "rotate-key":
		c, key, err := o.connect(getenv)
		if err != nil {
			return err
		}
		k, err := c.RotateAuditKey(ctx, key)
		if err != nil {
			return o.explain(err)
		}
		return printJSON(out, k)
	}
	if tenant == "" {
		return usageError{errors.New("audit verify needs -tenant TENANT-ID")}
	}
	var r *auditchain.Report
	if file != "" {
		if keysFile == "" {
			return usageError{errors.New("audit verify -file needs -keys KEYS.json (tokenvault audit keys prints it)")}
		}
		var err error
		if sign {
			return usageError{errors.New("-sign goes without -file: only the running server can sign")}
		}
		if r, err = verifyExportFile(file, keysFile, tenant, first); err != nil {
			return err
		}
	} else {
		if keysFile != "" {
			return usageError{errors.New("-keys goes with -file: online, the server checks with its own keys")}
		}
		c, key, err := o.connect(getenv)
		if err != nil {
			return err
		}
		if sign {
			if _, err := c.SignAuditChain(ctx, key, tenant); err != nil {
				return o.explain(err)
			}
		}
		if r, err = c.VerifyAuditChain(ctx, key, tenant); err != nil {
			return o.explain(err)
		}
	}
	if asJSON {
		if err := printJSON(out, r); err != nil {
			return err
		}
	} else {
		printReport(out, r)
	}
	if !r.OK {
		return fmt.Errorf("the audit chain of tenant %s does not verify: %s, the first %s", tenant, problems(len(r.Problems)), r.Problems[0])
	}
	return nil
}

// auditKeysFile is the JSON of GET /audit/keys, which audit keys prints
// and audit verify -keys reads.
type auditKeysFile struct {
	Keys []auditchain.PublicKey `json:"keys"`
}

// verifyExportFile verifies tenant's chain from the export file and the
// keys file.
func verifyExportFile(file, keysFile, tenant string, first uint64) (*auditchain.Report, error) {
	kb, err := os.ReadFile(keysFile)
	if err != nil {
		return nil, err
	}
	var keys auditKeysFile
	if err := json.Unmarshal(kb, &keys); err != nil {
		return nil, fmt.Errorf("%s: not the JSON of GET /audit/keys: %w", keysFile, err)
	}
	if len(keys.Keys) == 0 {
		return nil, fmt.Errorf("%s holds no key (it is the JSON of GET /audit/keys: {\"keys\": [...]})", keysFile)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := auditchain.VerifyExport(f, tenant, keys.Keys, first)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return r, nil
}

// printReport writes r for a person.
func printReport(w io.Writer, r *auditchain.Report) {
	verdict := "OK"
	if !r.OK {
		verdict = problems(len(r.Problems))
	}
	fmt.Fprintf(w, "tenant %s: %s\n", r.TenantID, verdict)
	if r.Lines > 0 {
		fmt.Fprintf(w, "lines: %d, seq %d to %d, head %s\n", r.Lines, r.FirstSeq, r.LastSeq, r.Head)
	} else {
		fmt.Fprintln(w, "lines: none")
	}
	final := ""
	if r.Final {
		final = ", final (the tenant was deleted)"
	}
	fmt.Fprintf(w, "checkpoints: %d, signed through seq %d%s\n", r.Checkpoints, r.SignedThrough, final)
	if r.Unlinked > 0 {
		fmt.Fprintf(w, "not yet covered: %d lines committed and not linked yet (linked within seconds; verify again)\n", r.Unlinked)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
}

// problems is "1 problem", "2 problems".
func problems(n int) string {
	if n == 1 {
		return "1 problem"
	}
	return fmt.Sprintf("%d problems", n)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
