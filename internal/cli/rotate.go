package cli

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/tokenvault/tokenvault"
	berrors "go.etcd.io/bbolt/errors"
)

// Master key rotation with key files, safe against a crash at any point.
//
// A rotation first writes the new key to master.key.new (0600, synced),
// keeps the current key as master.key.<key id> (0600, synced: backups
// taken before the rotation need it), then re-wraps every keyring in the
// store with the new key (one transaction), and only then renames
// master.key.new over master.key. A start that finds master.key.new
// finishes whatever was interrupted: it opens the store knowing both keys,
// re-wraps again (harmless if the first attempt had committed) and
// renames. At no moment does the store, or a backup of it, hold data that
// no key file can open. Temporary files (master.key.*.tmp*) that a crash
// left before any key file they were to become existed are removed by the
// next start, once it holds the store.

const pendingKeyFile = "master.key.new"

// previousKeyFile is the name a master key is kept under after a rotation
// replaced it: master.key.<its key id>, which restore names when a backup
// needs it.
func previousKeyFile(keyID string) string { return "master.key." + keyID }

// localKeyID is tokenvault.LocalKeyID for a key already checked.
func localKeyID(key []byte) string {
	id, err := tokenvault.LocalKeyID(key)
	if err != nil {
		return "unknown"
	}
	return id
}

// keepPreviousKey writes key to <dataDir>/master.key.<key id> (0600,
// synced) unless that file holds it already, and returns the file's path.
// It never replaces a file that holds another key.
func keepPreviousKey(dataDir string, key []byte) (string, error) {
	path := filepath.Join(dataDir, previousKeyFile(localKeyID(key)))
	if b, err := os.ReadFile(path); err == nil {
		if k, err := decodeKey(strings.TrimSpace(string(b)), path); err != nil || !bytes.Equal(k, key) {
			return "", fmt.Errorf("%s exists and does not hold the master key of that id: move it away and run again", path)
		}
		return path, nil
	}
	if err := writeKeyFile(path, key, os.Link); err != nil { // Link never replaces a file
		return "", fmt.Errorf("keep the previous master key: %w", err)
	}
	return path, syncDir(dataDir)
}

// writeKeyFile writes key, in hex, to path durably and whole: to a
// temporary file beside it (0600, master.key.*.tmp*, which
// removeRotationLeftovers removes after a crash), synced, then put in
// place by place (os.Rename, or os.Link to never replace a file).
func writeKeyFile(path string, key []byte, place func(tmp, path string) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*") // 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // renamed or linked to path below, or failed
	_, err = f.WriteString(hex.EncodeToString(key) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(tmp, path)
	}
	return err
}

// removeRotationLeftovers removes the temporary files of key files
// (master.key.new.tmp*, master.key.<id>.tmp*) that a crash left behind:
// each was renamed or linked to its key file once whole, and nothing in
// the store was wrapped under a key before that, so none is needed. The
// caller holds the store (bbolt's lock), so no rotation is writing them.
func removeRotationLeftovers(dataDir string, log *slog.Logger) error {
	left, err := filepath.Glob(filepath.Join(dataDir, "master.key.*.tmp*"))
	if err != nil {
		return err
	}
	for _, f := range left {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove what an interrupted master key rotation left: %w", err)
		}
		log.Info("removed what an interrupted master key rotation left", "file", f)
	}
	return nil
}

// readPendingKey returns the key of an interrupted rotation, or nil.
func readPendingKey(dataDir string) ([]byte, error) {
	path := filepath.Join(dataDir, pendingKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeKey(strings.TrimSpace(string(b)), path)
}

// writePendingKey creates master.key.new with a new random key, durably
// and whole: the key is written and synced to a temporary file first, so
// a crash never leaves a master.key.new that holds part of a key.
func writePendingKey(dataDir string) ([]byte, error) {
	key := make([]byte, 32)
	rand.Read(key)
	if err := writeKeyFile(filepath.Join(dataDir, pendingKeyFile), key, os.Rename); err != nil {
		return nil, err
	}
	return key, syncDir(dataDir)
}

// finishRotation keeps oldKey as master.key.<id>, re-wraps the store with
// newKey, makes master.key.new the master key file, and logs which key
// older backups need and where it is kept.
func finishRotation(ctx context.Context, v *tokenvault.Vault, dataDir string, oldKey, newKey []byte, log *slog.Logger) error {
	kept, err := keepPreviousKey(dataDir, oldKey)
	if err != nil {
		return fmt.Errorf("rotate master key: %w", err)
	}
	if err := v.RotateMasterKey(ctx, newKey); err != nil {
		return fmt.Errorf("rotate master key: %w", err)
	}
	if err := os.Rename(filepath.Join(dataDir, pendingKeyFile), filepath.Join(dataDir, "master.key")); err != nil {
		return fmt.Errorf("rotate master key: the store now needs %s: %w", pendingKeyFile, err)
	}
	if err := syncDir(dataDir); err != nil {
		return err
	}
	oldID := localKeyID(oldKey)
	log.Warn("rotated the master key: backups taken before now need the previous key, kept in previous_key_file (0600); keep it with those backups, apart from them, until they expire",
		"key_file", filepath.Join(dataDir, "master.key"), "key_id", localKeyID(newKey),
		"previous_key_id", oldID, "previous_key_file", kept,
		"restore_older_backups", "tokenvault restore -i BACKUP -data NEW-DIR -master-key-file "+kept)
	return nil
}

// syncDir makes a file created or renamed in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Moving between kinds of root of trust (rotate-master-key -to, or a new
// key of a wrapper), safe against a crash at any point.
//
// The store is opened with the current wrapper (-seal) and, to unwrap
// only, the new one; every keyring is re-wrapped under the new one in one
// transaction; then the files change: to local, the new key was written
// to master.key.new before anything else and is renamed to master.key;
// from local, master.key is removed, so that no master key is left on
// disk. Run again after a crash, the same command opens the store
// whichever side of the commit it is on (both wrappers unwrap), re-wraps
// again (harmless) and finishes the files.

// rotateKeyWrapper moves the store cfg names from cfg.seal to cfg.rotateTo.
func rotateKeyWrapper(ctx context.Context, cfg config, getenv func(string) string, log *slog.Logger) (err error) {
	if !validSeal(cfg.rotateTo) {
		return unknownSeal("-to", cfg.rotateTo)
	}
	var closers []func() error
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()
	masterFile := filepath.Join(cfg.dataDir, "master.key")

	// The current wrapper.
	var cur tokenvault.KeyWrapper
	var curKeyID string // of a local master key
	if cfg.seal == sealLocal {
		if strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")) != "" {
			return errors.New("rotate-master-key moves the store from <data>/master.key; with the key in TOKENVAULT_MASTER_KEY use tokenvault.Vault.RotateKeyWrapper")
		}
		b, err := os.ReadFile(masterFile)
		if err != nil {
			return fmt.Errorf("-seal local: %w", err)
		}
		key, err := decodeKey(strings.TrimSpace(string(b)), masterFile)
		if err != nil {
			return err
		}
		if cur, err = tokenvault.NewLocalKeyWrapper(key); err != nil {
			return err
		}
		curKeyID = localKeyID(key)
	} else if cfg.seal == sealSplit {
		key, _, err := splitRootKey(cfg.dataDir, cfg.splitShares, cfg.splitIdentities)
		if err != nil {
			return err
		}
		cur, err = tokenvault.NewLocalKeyWrapper(key) // keeps its own copy
		clear(key)
		if err != nil {
			return err
		}
	} else {
		kw, closeKW, err := keyWrapper(ctx, cfg.seal, cfg, getenv, cfg.pkcs11KeyLabel, cfg.kmsAEADKeyFile)
		if err != nil {
			return fmt.Errorf("-seal %s: %w", cfg.seal, err)
		}
		closers = append(closers, closeKW)
		cur = kw
	}

	// The new one.
	var next tokenvault.KeyWrapper
	var newKey []byte
	var newSplit *splitDescription // -to split: written to split.json once the store has moved
	switch cfg.rotateTo {
	case sealSplit:
		// The new key is made once the store is open (below): a
		// split.json.new left by an interrupted run is either what the
		// store has moved to already, or to be replaced.
		if _, _, err := readRecipients(cfg.splitRecipients); err != nil {
			return fmt.Errorf("-split-recipients: %w", err)
		}
	case sealLocal:
		if newKey, err = readPendingKey(cfg.dataDir); err != nil {
			return err
		}
		if newKey == nil { // not a second run
			if newKey, err = writePendingKey(cfg.dataDir); err != nil {
				return err
			}
		}
		if next, err = tokenvault.NewLocalKeyWrapper(newKey); err != nil {
			return err
		}
	case sealPKCS11:
		label := cmp.Or(cfg.toPKCS11KeyLabel, cfg.pkcs11KeyLabel)
		if cfg.seal == sealPKCS11 && label == cfg.pkcs11KeyLabel {
			return errors.New("-to pkcs11 from -seal pkcs11 needs -to-pkcs11-key-label, the label of a new key")
		}
		kw, closeKW, err := keyWrapper(ctx, sealPKCS11, cfg, getenv, label, "")
		if err != nil {
			return fmt.Errorf("-to pkcs11: %w", err)
		}
		closers = append(closers, closeKW)
		next = kw
	case sealKMSAEAD:
		if cfg.toKMSAEADKeyFile == "" {
			return errors.New("-to kms-aead needs -to-kms-aead-key-file")
		}
		kw, closeKW, err := keyWrapper(ctx, sealKMSAEAD, cfg, getenv, "", cfg.toKMSAEADKeyFile)
		if err != nil {
			return fmt.Errorf("-to kms-aead: %w", err)
		}
		closers = append(closers, closeKW)
		next = kw
	default: // a registered kind (Register)
		if cfg.seal == cfg.rotateTo {
			// Its flags name one key: a new version of it is made in the
			// KMS (AWS KMS and Cloud KMS rotate keys, transit has
			// POST /v1/<mount>/keys/<key>/rotate, Key Vault new versions),
			// and the old versions keep unwrapping.
			return fmt.Errorf("-to %s from -seal %s: rotate the key in the KMS itself (its old versions still unwrap what they wrapped); to move to another key of %s, go through another kind (-to local, then -to %s with the new key's flags)",
				cfg.rotateTo, cfg.seal, cfg.seal, cfg.rotateTo)
		}
		kw, closeKW, err := keyWrapper(ctx, cfg.rotateTo, cfg, getenv, "", "")
		if err != nil {
			return fmt.Errorf("-to %s: %w", cfg.rotateTo, err)
		}
		closers = append(closers, closeKW)
		next = kw
	}

	opts := tokenvault.Options{Logger: log, Keys: tokenvault.KeyOptions{Wrapper: cur}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}}
	if next != nil {
		opts.Keys.PreviousWrappers = []tokenvault.KeyWrapper{next}
	}
	if cfg.store == "postgres" {
		s, err := openPostgres(ctx, cfg)
		if err != nil {
			return err
		}
		closers = append(closers, s.Close)
		opts.Store = s
	} else {
		path := filepath.Join(cfg.dataDir, "vault.db")
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("no store to rotate: %w", err)
		}
		opts.Path = path
	}
	v, err := tokenvault.Open(ctx, opts)
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return fmt.Errorf("a tokenvault is already running on the data directory %s (%s is locked by another process): stop it first", cfg.dataDir, opts.Path)
		}
		if cfg.rotateTo == sealSplit {
			if done, ferr := finishInterruptedSplit(cfg, err, log); done || ferr != nil {
				return ferr
			}
		}
		return err
	}
	closers = append(closers, v.Close)
	if cfg.store != "postgres" {
		if err := removeRotationLeftovers(cfg.dataDir, log); err != nil {
			return err
		}
	}
	if cfg.rotateTo == sealSplit {
		d, key, err := makeSplit(cfg, log)
		if err != nil {
			return err
		}
		next, err = tokenvault.NewLocalKeyWrapper(key) // keeps its own copy
		clear(key)
		if err != nil {
			return err
		}
		newSplit = &d
	}
	if err := v.RotateKeyWrapper(ctx, next); err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	counts, err := v.WrappedKeys(ctx)
	if err != nil {
		return err
	}
	if newSplit != nil {
		if err := finishSplit(cfg, *newSplit, log); err != nil {
			return err
		}
	} else if cfg.seal == sealSplit {
		if err := retireSplit(cfg.dataDir, log); err != nil {
			return err
		}
	}
	switch {
	case cfg.rotateTo == sealLocal:
		if err := os.Rename(filepath.Join(cfg.dataDir, pendingKeyFile), masterFile); err != nil {
			return fmt.Errorf("rotate: the store now needs %s: %w", pendingKeyFile, err)
		}
		if err := syncDir(cfg.dataDir); err != nil {
			return err
		}
	case cfg.seal == sealLocal:
		if err := os.Remove(masterFile); err != nil {
			return fmt.Errorf("rotate: the store no longer needs %s, but it could not be removed: %w", masterFile, err)
		}
		if err := syncDir(cfg.dataDir); err != nil {
			return err
		}
		log.Warn("removed the old master key file, as a move to "+cfg.rotateTo+" means: backups taken before this rotation need that key (restore names its id) and only a copy made before can open them",
			"key_file", masterFile, "previous_key_id", curKeyID)
	}
	for _, c := range counts {
		log.Info("rotated the master key", "to", cfg.rotateTo, "kind", c.Kind, "key_id", c.KeyID, "version", c.Version, "keyrings", c.Count)
	}
	return nil
}
