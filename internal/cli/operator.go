package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/store/bolt"
)

// The operator key opens the operator API (httpapi.Options.OperatorKey):
// creating, listing and deleting tenants, and backups. The server reads it
// from TOKENVAULT_OPERATOR_KEY, or the file -operator-key-file names, or
// <data>/operator.key, which it creates (0600, a random 256-bit key in
// hex) on first run. The commands tenant, backup and restore are clients
// of that API (restore excepted: it works on files) and read the key the
// same way, from the environment or -operator-key-file (default
// ./data/operator.key, the default server's).

const operatorKeyFileName = "operator.key"

// loadOperatorKey returns the server's operator key, and where it came
// from, for the log (never the key).
func loadOperatorKey(cfg config, getenv func(string) string) (key, from string, err error) {
	if s := strings.TrimSpace(getenv("TOKENVAULT_OPERATOR_KEY")); s != "" {
		if len(s) < httpapi.MinOperatorKeyLength {
			return "", "", fmt.Errorf("TOKENVAULT_OPERATOR_KEY must hold at least %d characters", httpapi.MinOperatorKeyLength)
		}
		return s, "TOKENVAULT_OPERATOR_KEY", nil
	}
	if cfg.operatorKeyFile != "" {
		key, err := readOperatorKey(cfg.operatorKeyFile)
		return key, cfg.operatorKeyFile, err
	}
	path := filepath.Join(cfg.dataDir, operatorKeyFileName)
	key, err = readOperatorKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, path, err
	}
	b := make([]byte, 32)
	rand.Read(b)
	key = hex.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", err
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return "", "", err
	}
	return key, path, f.Close()
}

// readOperatorKey reads an operator key file. Errors never quote it.
func readOperatorKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	key := strings.TrimSpace(string(b))
	if len(key) < httpapi.MinOperatorKeyLength {
		return "", fmt.Errorf("%s must hold an operator key of at least %d characters", path, httpapi.MinOperatorKeyLength)
	}
	return key, nil
}

// operatorEnvOnly are the operator commands' environment-only settings.
var operatorEnvOnly = []struct{ name, usage string }{
	{"TOKENVAULT_OPERATOR_KEY", "the operator key, instead of -operator-key-file (a secret: no flag)"},
}

// operatorFlags are how an operator command reaches the server; keyFrom
// says where the key was read (connect), for messages.
type operatorFlags struct {
	server, keyFile, keyFrom string
}

// newOperatorFlagSet is a FlagSet with -server and -operator-key-file,
// which have environment variables like the server's flags. What one
// invocation acts on (a name, a file) is given on its command line only.
func newOperatorFlagSet(name, usage string, o *operatorFlags) *FlagSet {
	fs := newFlagSet(name, usage)
	fs.envOnly = operatorEnvOnly
	fs.StringVar(&o.server, "server", "http://127.0.0.1:8080", "base `URL` of the running server")
	fs.Bind("server", "TOKENVAULT_SERVER")
	fs.StringVar(&o.keyFile, "operator-key-file", filepath.Join("data", operatorKeyFileName), "`file` holding the server's operator key")
	fs.Bind("operator-key-file", "TOKENVAULT_OPERATOR_KEY_FILE")
	return fs
}

// connect returns a client of the server and the operator key, and
// remembers where the key came from (for explain).
func (o *operatorFlags) connect(getenv func(string) string) (*client.Client, tokenvault.Credential, error) {
	key := strings.TrimSpace(getenv("TOKENVAULT_OPERATOR_KEY"))
	o.keyFrom = "TOKENVAULT_OPERATOR_KEY"
	if key == "" {
		var err error
		if key, err = readOperatorKey(o.keyFile); err != nil {
			return nil, "", fmt.Errorf("the operator key: %w (give -operator-key-file or TOKENVAULT_OPERATOR_KEY)", err)
		}
		o.keyFrom = o.keyFile
	}
	return client.New(o.server, nil), tokenvault.Credential(key), nil
}

// explain adds to an error of the server's client the setting to change:
// -server (TOKENVAULT_SERVER) when the server cannot be reached, the
// operator key's when the server refuses it.
func (o *operatorFlags) explain(err error) error {
	var ue *url.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		return fmt.Errorf("%w (the server's URL is set with -server or TOKENVAULT_SERVER; is it running there?)", err)
	case errors.Is(err, tokenvault.ErrUnauthenticated):
		return fmt.Errorf("%w: the server at %s refused the operator key from %s; give the server's operator key (its <data>/operator.key, or the TOKENVAULT_OPERATOR_KEY it was started with) with -operator-key-file or TOKENVAULT_OPERATOR_KEY", err, o.server, o.keyFrom)
	}
	return err
}

const tenantUsage = `Usage: tokenvault tenant create [flags] NAME
       tokenvault tenant list [flags]
       tokenvault tenant delete [flags] TENANT-ID

Administers the tenants of a running server through its operator API.
create prints the new tenant, its owner and its first management
application as JSON, with the application's key (shown this once).
list prints every tenant (id, name, creation time). delete removes a
tenant with all of its data, at once and for good.`

// tenantCommand runs tenant create, list or delete.
func tenantCommand(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprintln(out, tenantUsage)
			return nil
		}
		return usageError{errors.New("tenant needs a subcommand: create, list or delete (tokenvault tenant -h)")}
	}
	sub, args := args[0], args[1:]
	var o operatorFlags
	fs := newOperatorFlagSet("tenant "+sub, tenantUsage, &o)
	fs.SetOutput(out)
	var req tokenvault.CreateTenantRequest
	switch sub {
	case "create":
		fs.StringVar(&req.Owner.Email, "owner-email", "", "the owner's e-mail `address`")
		fs.StringVar(&req.Owner.FirstName, "owner-first-name", "", "the owner's first name")
		fs.StringVar(&req.Owner.LastName, "owner-last-name", "", "the owner's last name")
		fs.StringVar(&req.ApplicationName, "application-name", "", "the first management application's name (default Management)")
	case "list", "delete":
	default:
		return usageError{fmt.Errorf("unknown tenant subcommand %q: create, list or delete", sub)}
	}
	if err := fs.parse(args, getenv); err != nil {
		return err
	}
	want := map[string]int{"create": 1, "list": 0, "delete": 1}[sub]
	if fs.NArg() != want {
		// The usage first, then what was wrong (cli prints it last).
		fs.SetOutput(errOut)
		fs.Usage()
		fmt.Fprintln(errOut)
		what := map[string]string{"create": "one NAME", "list": "no argument", "delete": "one TENANT-ID"}[sub]
		if fs.NArg() == 0 {
			return usageError{fmt.Errorf("tenant %s takes %s after its flags", sub, what)}
		}
		return usageError{fmt.Errorf("tenant %s takes %s after its flags, not %s", sub, what, strings.Join(fs.Args(), " "))}
	}
	c, key, err := o.connect(getenv)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		req.Name = fs.Arg(0)
		boot, err := c.CreateTenant(ctx, key, req)
		if err != nil {
			return o.explain(err)
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(boot)
	case "list":
		tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tCREATED")
		page := tokenvault.PageRequest{Size: tokenvault.MaxPageSize}
		for {
			p, err := c.ListTenants(ctx, key, page)
			if err != nil {
				return o.explain(err)
			}
			for _, t := range p.Data {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.ID, t.Name, t.CreatedAt.Format("2006-01-02T15:04:05Z07:00"))
			}
			if p.Pagination.After == "" {
				break
			}
			page.Start = p.Pagination.After
		}
		return tw.Flush()
	default:
		if err := c.DeleteTenant(ctx, key, fs.Arg(0)); err != nil {
			return o.explain(err)
		}
		fmt.Fprintf(out, "deleted tenant %s and all of its data\n", fs.Arg(0))
		return nil
	}
}

const backupUsage = `Usage: tokenvault backup [flags] -o FILE

Writes a consistent snapshot of a running server's store (GET
/operator/backup; bbolt stores only: back PostgreSQL up with pg_dump or
pg_basebackup) to FILE, while the server keeps serving: every write the
server acknowledged before the backup began is in it. The snapshot goes
to a temporary file next to FILE, is checked to be a whole bbolt
database, and only then renamed to FILE (replacing an older one): a
failed backup leaves no FILE and no partial file.

The snapshot is as encrypted as the store and does not hold the master
key: keep <data>/master.key (or TOKENVAULT_MASTER_KEY), which restore
needs, somewhere else than the backups. rotate-master-key replaces that
key and keeps the one it replaced as <data>/master.key.<key id>: backups
taken before the rotation need that one (restore names the id it needs).

-subject-keys writes the subject key store instead (<data>/subject-keys.db,
GET /operator/backup/subject-keys): the data subjects' keys, which an
erasure destroys (docs/erasure.md). Keep its backups apart from the
data's, and never put one back that is older than the last erasure: it
would bring the erased subjects' tokens back. restore leaves
<data>/subject-keys.db in place.`

// backupCommand streams GET /operator/backup to a file.
func backupCommand(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
	var o operatorFlags
	fs := newOperatorFlagSet("backup", backupUsage, &o)
	fs.SetOutput(out)
	var file string
	var subjectKeys bool
	fs.StringVar(&file, "o", "", "`file` to write the backup to (required)")
	fs.BoolVar(&subjectKeys, "subject-keys", false, "back up the subject key store instead of the data (docs/erasure.md): a backup of its own, never restored older than the last erasure")
	if err := fs.parse(args, getenv); err != nil {
		return err
	}
	if file == "" || fs.NArg() > 0 {
		return usageError{errors.New("backup takes -o FILE and no argument")}
	}
	c, key, err := o.connect(getenv)
	if err != nil {
		return err
	}
	backup, what := c.Backup, "a backup"
	if subjectKeys {
		backup, what = c.BackupSubjectKeys, "a backup of the subject key store"
	}
	n, err := writeFileAtomically(file, func(f *os.File) error {
		if err := backup(ctx, key, f); err != nil {
			return o.explain(err)
		}
		if err := f.Sync(); err != nil {
			return err
		}
		return bolt.Check(f.Name())
	})
	if err != nil {
		return fmt.Errorf("no backup written: %w", err)
	}
	fmt.Fprintf(out, "wrote %s of %d bytes to %s\n", what, n, file)
	return nil
}

// writeFileAtomically has write fill a new temporary file (0600) next to
// path, then renames it to path. When write fails, the temporary file is
// removed and path is left as it was. It returns the file's size.
func writeFileAtomically(path string, write func(*os.File) error) (int64, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var size int64
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(tmp); err == nil {
			size = fi.Size()
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return size, nil
}

const restoreUsage = `Usage: tokenvault restore [flags] -i FILE -data DIR

Makes DIR the data directory of a bbolt server holding the backup FILE
(written by tokenvault backup), for tokenvault serve -data DIR. DIR must
not exist, or be empty but for master.key and operator.key: restore never
overwrites data.

The backup does not hold the master key. restore takes the master key the
backed-up server had when the backup was taken, in this order:
TOKENVAULT_MASTER_KEY; the file -master-key-file names (that server's
<data>/master.key, or, for a backup taken before a rotate-master-key, the
<data>/master.key.<key id> the rotation kept), which is then copied to
DIR/master.key; DIR/master.key. It checks that FILE is a whole bbolt
database and that the key opens it before anything is written to
DIR/vault.db; a key that does not open it is refused with the id of the
key the backup needs and the id of the key given. The server's management.key
and operator.key are not part of a backup: serve creates a new
operator.key on its first start in DIR.

A backup of a server whose keys are in an HSM (-seal pkcs11) or a KMS is
checked with that wrapper instead, given by the same -seal flags as serve
(the PIN in TOKENVAULT_PKCS11_PIN or -pkcs11-pin-file); no master key is
read or written.

A backup of a server of a split root key (-seal split) is checked with k
shares of the split it was taken under: -split-share and -split-identity
for each custodian (in pairs), and -split-file, that split's description
(the server's split.json, or the split.<key id>.json a rekey kept), which
is copied to DIR/split.json. The key is never written.`

// restoreCommand installs a backup file as a new data directory.
func restoreCommand(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
	fl := newFlagSet("restore", restoreUsage)
	fl.envOnly = envOnlyNamed("TOKENVAULT_MASTER_KEY", "TOKENVAULT_PKCS11_PIN")
	fl.SetOutput(out)
	sc := defaultConfig()
	sealFlags(fl, &sc)
	var in, dir, keyFile string
	fl.StringVar(&in, "i", "", "backup `file` to restore (required)")
	fl.StringVar(&dir, "data", "data", "data `directory` to restore into: missing, or empty but for master.key and operator.key")
	fl.Bind("data", "TOKENVAULT_DATA")
	fl.StringVar(&keyFile, "master-key-file", "", "`file` holding the master key the backup was taken under (the backed-up server's master.key, or the\nmaster.key.<key id> a later rotate-master-key kept); copied to DIR/master.key")
	var splitFile string
	splitShareFlags(fl, &sc)
	fl.StringVar(&splitFile, "split-file", "", "for -seal split: the `file` describing the split the backup was taken under (the backed-up server's split.json,\nor the split.<key id>.json a later rekey kept); copied to DIR/split.json")
	if err := fl.parse(args, getenv); err != nil {
		return err
	}
	if in == "" || fl.NArg() > 0 {
		return usageError{errors.New("restore takes -i FILE (and -data DIR) and no argument")}
	}
	if err := checkSeal(sc, getenv); err != nil {
		return usageError{err}
	}
	if sc.seal != sealLocal && keyFile != "" {
		return usageError{fmt.Errorf("-master-key-file and -seal %s exclude each other", sc.seal)}
	}
	if sc.seal != sealSplit && (splitFile != "" || len(sc.splitShares)+len(sc.splitIdentities) > 0) {
		return usageError{errors.New("-split-file, -split-share and -split-identity are settings of -seal split")}
	}
	if err := bolt.Check(in); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		// The subject key store stays: a data backup is restored beside
		// the live one, never with an older one (docs/erasure.md).
		if e.Name() != "master.key" && e.Name() != operatorKeyFileName && e.Name() != splitFileName && !strings.HasPrefix(e.Name(), subjectKeysFile) {
			return fmt.Errorf("%s holds %s: restore only into a missing or empty data directory (master.key, operator.key and subject-keys.db aside), so that nothing is overwritten", dir, e.Name())
		}
	}
	dirKey := filepath.Join(dir, "master.key")
	var master []byte
	var kw tokenvault.KeyWrapper
	copyKey := false
	keyFrom := "TOKENVAULT_MASTER_KEY" // where master came from, for errors
	var split *splitDescription        // -seal split: the description, written to DIR/split.json
	switch {
	case sc.seal == sealSplit:
		// The key is gathered from k shares and checked against the
		// description; it is never written.
		from := cmp.Or(splitFile, splitDescriptionPath(dir))
		d, rerr := readSplitDescription(from)
		if rerr != nil {
			return fmt.Errorf("-seal split needs the description of the split the backup was taken under (-split-file, or DIR/split.json): %w", rerr)
		}
		split = &d
		if master, err = combineShareFiles(d, sc.splitShares, sc.splitIdentities); err == nil {
			defer clear(master)
		}
		keyFrom = "the shares of split " + d.KeyID
	case sc.seal != sealLocal:
		var closeKW func() error
		kw, closeKW, err = keyWrapper(ctx, sc.seal, sc, getenv, sc.pkcs11KeyLabel, sc.kmsAEADKeyFile)
		if err != nil {
			return fmt.Errorf("-seal %s: %w", sc.seal, err)
		}
		defer closeKW()
	case strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")) != "":
		master, err = decodeKey(strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")), "TOKENVAULT_MASTER_KEY")
	case keyFile != "":
		master, err = readMasterKeyFile(keyFile)
		copyKey, keyFrom = true, keyFile
		if existing, rerr := readMasterKeyFile(dirKey); rerr == nil {
			if string(existing) != string(master) {
				return fmt.Errorf("%s holds another master key than %s", dirKey, keyFile)
			}
			copyKey = false
		}
	default:
		master, err = readMasterKeyFile(dirKey)
		keyFrom = dirKey
		if errors.Is(err, fs.ErrNotExist) {
			return errors.New("restore needs the master key the backup was taken under: TOKENVAULT_MASTER_KEY, -master-key-file, or DIR/master.key")
		}
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	target := filepath.Join(dir, "vault.db")
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(dir, ".vault.db.restore-*")
	if err != nil {
		return err
	}
	tmpPath := tmp.Name()
	defer os.Remove(tmpPath) // gone after the link below, or on failure
	_, err = io.Copy(tmp, src)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: tmpPath, Logger: slog.New(slog.DiscardHandler), Keys: tokenvault.KeyOptions{MasterKey: master, Wrapper: kw}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}})
	if err != nil {
		needs, named := tokenvault.NeededKey(err)
		if errors.Is(err, tokenvault.ErrWrongMasterKey) && kw != nil {
			if named {
				return fmt.Errorf("the -seal %s key wrapper does not open %s, which was taken under the %s key %q (version %q): give the settings of the server the backup was taken from: %w", sc.seal, in, needs.Kind, needs.KeyID, needs.Version, err)
			}
			return fmt.Errorf("the -seal %s key wrapper does not open %s: give the settings of the server the backup was taken from: %w", sc.seal, in, err)
		}
		if errors.Is(err, tokenvault.ErrWrongMasterKey) && split != nil {
			if named && needs.Kind == "local" {
				return fmt.Errorf("the split root key %s does not open %s, which was taken under root key %s: give that split's description (-split-file: split.%s.json, kept by the rekey that replaced it) and k of its shares", split.KeyID, in, needs.KeyID, needs.KeyID)
			}
			return fmt.Errorf("the split root key %s does not open %s: give the split the backup was taken under", split.KeyID, in)
		}
		if errors.Is(err, tokenvault.ErrWrongMasterKey) {
			if named && needs.Kind == "local" {
				return fmt.Errorf("the master key does not open %s: it was taken under master key %s, and %s holds master key %s; give the key of that id with -master-key-file (rotate-master-key keeps a key it replaced as <data>/%s)",
					in, needs.KeyID, keyFrom, localKeyID(master), previousKeyFile(needs.KeyID))
			}
			if named {
				return fmt.Errorf("the master key does not open %s: it was taken under the %s key %q: give that root of trust with -seal and its settings", in, needs.Kind, needs.KeyID)
			}
			return fmt.Errorf("the master key does not open %s: give the key of the server the backup was taken from", in)
		}
		return err
	}
	tenants, err := v.ListTenants(ctx, tokenvault.PageRequest{Size: 1})
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if split != nil && splitFile != "" {
		if err := writeSplitDescription(splitDescriptionPath(dir), *split); err != nil {
			return err
		}
	}
	if copyKey {
		if err := os.WriteFile(dirKey+".tmp", []byte(hex.EncodeToString(master)+"\n"), 0o600); err != nil {
			return err
		}
		if err := os.Link(dirKey+".tmp", dirKey); err != nil {
			os.Remove(dirKey + ".tmp")
			return err
		}
		os.Remove(dirKey + ".tmp")
	}
	// A link never replaces an existing file, unlike a rename.
	if err := os.Link(tmpPath, target); err != nil {
		return fmt.Errorf("install %s: %w", target, err)
	}
	under := "its key wrapper"
	switch {
	case split != nil:
		under = fmt.Sprintf("split root key %s, %d of %d custodians, described in %s", split.KeyID, split.K, split.N, splitDescriptionPath(dir))
	case master != nil:
		under = "master key " + localKeyID(master) + ", in " + dirKey
		if !copyKey && keyFrom == "TOKENVAULT_MASTER_KEY" {
			under = "master key " + localKeyID(master) + ", from TOKENVAULT_MASTER_KEY"
		}
	}
	seal := ""
	if split != nil {
		seal = " -seal split"
	}
	fmt.Fprintf(out, "restored %s into %s (%d tenants, under %s); start it with: tokenvault serve -data %s%s\n", in, target, tenants.Pagination.TotalItems, under, dir, seal)
	return nil
}

// readMasterKeyFile reads a master key file (64 hex digits).
func readMasterKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeKey(strings.TrimSpace(string(b)), path)
}
