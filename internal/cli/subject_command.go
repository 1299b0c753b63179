package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/client"
)

const subjectUsage = `Usage: tokenvault subject erase [flags] SUBJECT
       tokenvault subject certificate [flags] SUBJECT
       tokenvault subject report [flags] SUBJECT

Data subjects (docs/erasure.md), on a running server, with the tenant key
in TOKENVAULT_API_KEY:

erase destroys the subject's data key, so that every token of the subject
is unreadable at once (in backups too), removes its tokens, and prints
the signed erasure certificate (JSON: keep it; audit verify-certificate
checks it). A management key holding subject:erase. Calling it again
after an interruption finishes the erasure.

certificate prints the subject's last erasure certificate (subject:erase
or log:read).

report prints the subject's access report as JSON: its tokens, as the
key's token:read rules show them, and every access to their data
(token:access:read).`

// subjectCommand runs subject erase, certificate or report.
func subjectCommand(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprintln(out, subjectUsage)
			return nil
		}
		return usageError{errors.New("subject needs a subcommand: erase, certificate or report (tokenvault subject -h)")}
	}
	sub, args := args[0], args[1:]
	if sub != "erase" && sub != "certificate" && sub != "report" {
		return usageError{fmt.Errorf("unknown subject subcommand %q: erase, certificate or report", sub)}
	}
	fs := newFlagSet("subject "+sub, subjectUsage)
	fs.envOnly = []struct{ name, usage string }{
		{"TOKENVAULT_API_KEY", "the tenant key (a secret: no flag)"},
	}
	fs.SetOutput(out)
	var server string
	fs.StringVar(&server, "server", "http://127.0.0.1:8080", "base `URL` of the running server")
	fs.Bind("server", "TOKENVAULT_SERVER")
	if err := fs.parse(args, getenv); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{fmt.Errorf("subject %s takes one SUBJECT", sub)}
	}
	key := tokenvault.Credential(strings.TrimSpace(getenv("TOKENVAULT_API_KEY")))
	if key == "" {
		return errors.New("no key: set TOKENVAULT_API_KEY to the tenant key")
	}
	c := client.New(server, nil)
	subject := fs.Arg(0)
	var v any
	var err error
	switch sub {
	case "erase":
		v, err = c.EraseSubject(ctx, key, subject)
	case "certificate":
		v, err = c.SubjectCertificate(ctx, key, subject)
	case "report":
		v, err = c.SubjectAccessReport(ctx, key, subject)
	}
	if err != nil {
		return err
	}
	return printJSON(out, v)
}

// verifyCertificate checks the erasure certificate in file: its signature
// with the keys of keysFile (offline), or, without, with the running
// server's keys and, with TOKENVAULT_API_KEY (a key holding log:read),
// its presence in the tenant's audit chain: the erasure's line must name
// the certificate's hash.
func verifyCertificate(ctx context.Context, file, keysFile, server string, getenv func(string) string, out io.Writer) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var cert auditchain.ErasureCertificate
	if err := json.Unmarshal(b, &cert); err != nil {
		return fmt.Errorf("%s: not an erasure certificate: %w", file, err)
	}
	var keys []auditchain.PublicKey
	if keysFile != "" {
		kb, err := os.ReadFile(keysFile)
		if err != nil {
			return err
		}
		var kf auditKeysFile
		if err := json.Unmarshal(kb, &kf); err != nil || len(kf.Keys) == 0 {
			return fmt.Errorf("%s: not the JSON of GET /audit/keys", keysFile)
		}
		keys = kf.Keys
	} else if keys, err = client.New(server, nil).AuditKeys(ctx); err != nil {
		return err
	}
	if err := auditchain.VerifyCertificate(&cert, keys); err != nil {
		return fmt.Errorf("%s: the signature does not verify: the certificate was changed or not signed by this vault", file)
	}
	fmt.Fprintf(out, "signature: OK (key %s)\n", cert.KeyID)
	if keysFile != "" {
		return nil
	}
	key := tokenvault.Credential(strings.TrimSpace(getenv("TOKENVAULT_API_KEY")))
	if key == "" {
		return errors.New("online, the chain check needs TOKENVAULT_API_KEY: a management key of the tenant holding log:read (or give -keys to check the signature only)")
	}
	logs, err := client.New(server, nil).ListLogs(ctx, key, tokenvault.ListLogsRequest{EntityType: "subject", EntityID: cert.ID})
	if err != nil {
		return err
	}
	want := auditchain.ErasureMessage(cert.Hash())
	for _, l := range logs.Data {
		if l.Message == want {
			fmt.Fprintf(out, "audit chain: OK (line %s of %s)\n", l.ID, l.CreatedAt.Format("2006-01-02T15:04:05Z07:00"))
			return nil
		}
	}
	return fmt.Errorf("%s: no line of the tenant's audit chain names this certificate (sha256:%s)", file, cert.Hash())
}
