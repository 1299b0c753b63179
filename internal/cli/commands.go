package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// A command is one of tokenvault's subcommands: it parses its own flags
// (and environment) from args and writes its results (and its log) to
// out; errOut takes what is for the person at the terminal only, such as
// usage after a bad command line and the management key banner.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error
}

// commands lists the subcommands; serve is the default. It is filled in
// init: serve's usage lists the commands (otherCommands).
var commands map[string]command

func init() { commands = commandList() }

func commandList() map[string]command {
	return map[string]command{
		"serve": {"serve the API (the default)", func(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
			return run(ctx, args, getenv, out, errOut, nil)
		}},
		"version":           {"print the module version and VCS revision", versionCommand},
		"token-access":      {"print who accessed a token's data, or a data subject's (a management key)", tokenAccessCommand},
		"subject":           {"erase a data subject, print its erasure certificate or access report (a tenant key)", subjectCommand},
		"rotate-master-key": {"replace <data>/master.key with a new key, re-wrapping every tenant's keys, and exit", rotateMasterKeyCommand},
		"tenant":            {"create, list or delete tenants of a running server (operator key)", tenantCommand},
		"backup":            {"write a snapshot of a running server's store to a file (operator key)", backupCommand},
		"restore":           {"make a data directory of a backup file (the server stopped or elsewhere)", restoreCommand},
		"operator":          {"split the root key among custodians (k of n), unseal a server started with -seal split, rekey", operatorCommand},
		"audit":             {"verify a tenant's audit chain (a running server's, or offline from an export and the public keys); print or rotate the signing keys", auditCommand},
		"import":            {"import tokens keeping their ids (NDJSON, CSV, the hosted service's export) into a running server, resumably", importCommand},
		"export":            {"export the tenant's tokens, encrypted to an age public key, with a signed manifest; verify an export (a management key)", exportCommand},
	}
}

// Main runs the tokenvault command args name, with the environment getenv
// (os.Getenv), printing to stdout and stderr, and returns the process's exit
// status: 0 on success and for -h, 2 for an unknown command or bad flags, 1
// when the command failed. serve runs until ctx is done. The kinds of root
// of trust registered (Register) before it are those of -seal.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return cli(ctx, args, getenv, stdout, stderr)
}

// Serve is the serve command: it serves until ctx is done, logging to out.
// ready, when not nil, receives the listening address once the server
// accepts connections (for tests, such as contrib/cloudkms's). The
// management key of a first start is written to <data>/management.key
// only: Serve prints no banner (Main prints it to stderr).
func Serve(ctx context.Context, args []string, getenv func(string) string, out io.Writer, ready chan<- string) error {
	return run(ctx, args, getenv, out, io.Discard, ready)
}

// cli runs the command args name (serve when args is empty or starts with
// a flag) and returns the process's exit status: 0 on success and for -h,
// 2 for an unknown command or bad flags, 1 when the command failed.
func cli(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		printCommands(stdout)
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "tokenvault: unknown command %q\n\n", name)
		printCommands(stderr)
		return 2
	}
	err := cmd.run(ctx, args, getenv, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintln(stderr, "tokenvault:", err)
		return 2
	}
	fmt.Fprintf(stderr, "tokenvault %s: %v\n", name, err)
	return 1
}

// usageError is a command line the command cannot take.
type usageError struct{ error }

// commandOrder is the order help lists the commands in: every one
// (TestHelpListsEveryCommand).
var commandOrder = []string{"serve", "version", "rotate-master-key", "tenant", "backup", "restore", "operator", "token-access", "audit", "import", "export", "subject"}

// otherCommands lists every command but serve, for serve's usage.
func otherCommands() string {
	var b strings.Builder
	b.WriteString("Other commands (tokenvault <command> -h for each):")
	for _, name := range commandOrder[1:] {
		fmt.Fprintf(&b, "\n  %-18s %s", name, commands[name].summary)
	}
	return b.String()
}

func printCommands(w io.Writer) {
	fmt.Fprintln(w, "Usage: tokenvault <command> [flags]   (tokenvault <command> -h for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	for _, name := range commandOrder {
		fmt.Fprintf(w, "  %-18s %s\n", name, commands[name].summary)
	}
}

// versionCommand prints the main module's version and the VCS revision the
// binary was built from, as the Go toolchain recorded them.
// rotateMasterKeyUsage is the synopsis of rotate-master-key.
const rotateMasterKeyUsage = `Usage: tokenvault rotate-master-key [-to KIND] [flags]

Re-wraps every tenant's keys (and the system keys) under a new root of trust
in one transaction, then exits. The current one is given by the server's
flags (-seal and its settings), the new one by -to and its settings:

  (no -to) with -seal local     a new random <data>/master.key
  -to pkcs11                    the key -to-pkcs11-key-label (default
                                -pkcs11-key-label) in the token -pkcs11-*
                                name, generated there if missing; from
                                -seal local, <data>/master.key is removed
  -to local                     a new random <data>/master.key
  -to kms-aead                  the key in -to-kms-aead-key-file
  -to split                     a new random key split -split-k of the
                                custodians of -split-recipients, their
                                share files written to -split-out; from
                                -seal local, <data>/master.key is removed
  -seal split (any -to)         the current key is gathered from k share
                                files, each given with -split-share and
                                its custodian's age -split-identity; the
                                split it leaves is kept as
                                <data>/split.<key id>.json (older backups
                                need its shares); -seal split -to split is
                                tokenvault operator rekey
  -to KIND (another kind)       the key its flags name, such as -transit-*
                                (the tokenvault of contrib/cloudkms: awskms,
                                gcpckms, azurekeyvault, transit); from -seal
                                local, <data>/master.key is removed

A local rotation (no -to, or -to local from -seal local) keeps the key it
replaces as <data>/master.key.<key id> (0600): backups taken before the
rotation need that key, and only it opens them. The command logs both key
ids and the restore command for those backups:

  tokenvault restore -i BACKUP -data NEW-DIR -master-key-file <data>/master.key.<key id>

Keep that file with (but apart from) the backups it opens, until they
expire; then remove it. restore names the key id a backup needs.
A move from -seal local to another kind removes <data>/master.key (the
point of an HSM or KMS): copy it first if older backups are kept.

Stop the server first (bbolt locks its file; on PostgreSQL stop every
instance). An interrupted run (kill -9, power loss) is finished by running
the same command again, or by the next tokenvault serve: master.key.new is
made the master key, and temporary key files (master.key.*.tmp*) are
removed.`

// rotateFlagNames are the server's flags rotate-master-key takes: where
// the store is, the log, and (added by sealFlags) the root of trust.
var rotateFlagNames = []string{"data", "store", "dsn", "schema", "log-level", "log-format"}

// parseRotateConfig reads rotate-master-key's flags: the server's that say
// where the store and its root of trust are, and its own (-to ...). -h
// lists only these.
func parseRotateConfig(args []string, getenv func(string) string, out io.Writer) (config, error) {
	c := defaultConfig()
	all := serveFlags(&c)
	fs := newFlagSet("rotate-master-key", rotateMasterKeyUsage)
	fs.SetOutput(out)
	fs.envOnly = envOnlyNamed("TOKENVAULT_MASTER_KEY", "TOKENVAULT_PKCS11_PIN")
	for _, name := range rotateFlagNames {
		f := all.Lookup(name)
		fs.Var(f.Value, f.Name, f.Usage)
		fs.Bind(f.Name, all.env[f.Name])
	}
	sealFlags(fs, &c) // writes into c, as all's did; c.flags is fs now
	fs.StringVar(&c.rotateTo, "to", c.rotateTo, "the `kind` of root of trust to move to: "+strings.Join(allSealKinds(), ", ")+"; default -seal's")
	fs.Bind("to", "TOKENVAULT_ROTATE_TO")
	fs.StringVar(&c.toPKCS11KeyLabel, "to-pkcs11-key-label", c.toPKCS11KeyLabel, "`label` of the new key in the token, for -to pkcs11; default -pkcs11-key-label")
	fs.Bind("to-pkcs11-key-label", "TOKENVAULT_ROTATE_TO_PKCS11_KEY_LABEL")
	fs.StringVar(&c.toKMSAEADKeyFile, "to-kms-aead-key-file", c.toKMSAEADKeyFile, "`file` holding the new key of -to kms-aead (64 hex digits)")
	fs.Bind("to-kms-aead-key-file", "TOKENVAULT_ROTATE_TO_KMS_AEAD_KEY_FILE")
	splitShareFlags(fs, &c)
	fs.IntVar(&c.splitK, "split-k", 0, "for -to split: how many custodians' shares unseal the store (2 to the number of custodians)")
	fs.StringVar(&c.splitRecipients, "split-recipients", "", "for -to split: `file` of the custodians, one a line: NAME age1... (an age X25519 recipient)")
	fs.StringVar(&c.splitOut, "split-out", "", "for -to split: `directory` the custodians' share files (age-encrypted) are written to")
	if err := fs.parse(args, getenv); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q (tokenvault rotate-master-key [flags])", fs.Arg(0))
	case c.store != "bolt" && c.store != "postgres":
		return c, fmt.Errorf("-store must be bolt or postgres, not %q", c.store)
	case c.store == "postgres" && c.dsn == "":
		return c, errors.New("-store postgres needs -dsn (or TOKENVAULT_DSN)")
	case c.logFormat != "text" && c.logFormat != "json":
		return c, fmt.Errorf("-log-format must be text or json, not %q", c.logFormat)
	case c.rotateTo == sealSplit && (c.splitK == 0 || c.splitRecipients == "" || c.splitOut == ""):
		return c, errors.New("-to split needs -split-k, -split-recipients and -split-out")
	case c.rotateTo != sealSplit && (c.splitK != 0 || c.splitRecipients != "" || c.splitOut != ""):
		return c, errors.New("-split-k, -split-recipients and -split-out are settings of -to split")
	case c.seal != sealSplit && len(c.splitShares)+len(c.splitIdentities) > 0:
		return c, errors.New("-split-share and -split-identity are settings of -seal split")
	}
	return c, checkSeal(c, getenv)
}

// rotateMasterKeyCommand moves the store the serve flags name to a new
// master key or key wrapper, then exits. The server must not be running on
// a bbolt store (the file is locked); on PostgreSQL, stop the other
// instances first. A local rotation keeps the previous key (previousKeyFile)
// and says which backups need it.
func rotateMasterKeyCommand(ctx context.Context, args []string, getenv func(string) string, out, _ io.Writer) error {
	cfg, err := parseRotateConfig(args, getenv, out)
	if err != nil {
		return err
	}
	log := logger(out, cfg.logFormat, cfg.logLevel)
	if cfg.rotateTo == "" {
		cfg.rotateTo = cfg.seal
	}
	if cfg.seal == sealSplit && cfg.rotateTo == sealSplit && cfg.splitK == 0 {
		return usageError{errors.New("a rekey (-seal split -to split) needs -split-k, -split-recipients and -split-out: the new custodians")}
	}
	if cfg.seal == sealLocal && cfg.rotateTo == sealLocal {
		cfg.rotateMasterKey = true
		_, _, closeVault, err := openVault(ctx, cfg, getenv, log, nil, nil, nil)
		if err != nil {
			return err
		}
		closeVault()
		return nil
	}
	return rotateKeyWrapper(ctx, cfg, getenv, log)
}
