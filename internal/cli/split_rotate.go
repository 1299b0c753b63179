package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/tokenvault/tokenvault"
)

// Moving to a split root key (rotate-master-key -to split, and a rekey:
// -seal split -to split), safe against a crash at any point.
//
// The new key exists only in memory and as the share files: they are
// written to -split-out, and the split's description to split.json.new,
// before the store is re-wrapped under the key (one transaction); then
// split.json.new becomes split.json, and the root of trust the store left
// is retired (master.key removed; an older split.json kept as
// split.<key id>.json, the description older backups need). Run again
// after a crash, the command finds split.json.new: if the store needs its
// key (tokenvault.NeededKey), the move committed and only the files are
// finished; if the store still opens with the current root of trust, the
// run makes a new split, and the share files of the abandoned one are
// never used (they name its key id).

// makeSplit makes a new root key, writes its share files to cfg.splitOut
// and its description to split.json.new, and returns both. The caller
// clears the key.
func makeSplit(cfg config, log *slog.Logger) (splitDescription, []byte, error) {
	cs, rs, err := readRecipients(cfg.splitRecipients)
	if err != nil {
		return splitDescription{}, nil, fmt.Errorf("-split-recipients: %w", err)
	}
	if cfg.splitK < 2 || cfg.splitK > len(cs) {
		return splitDescription{}, nil, fmt.Errorf("-split-k must be within 2 and the number of custodians (%d), not %d", len(cs), cfg.splitK)
	}
	key, d, files, err := newSplit(cfg.splitK, cs, rs, cfg.splitOut)
	if err != nil {
		return d, nil, fmt.Errorf("write the share files: %w", err)
	}
	if err := writeSplitDescription(filepath.Join(cfg.dataDir, pendingSplitFile), d); err != nil {
		clear(key)
		return d, nil, err
	}
	for i, f := range files {
		log.Info("wrote a share file: hand it to its custodian, who alone can decrypt it", "custodian", cs[i].Name, "file", f)
	}
	return d, key, nil
}

// finishSplit makes split.json.new the split of the store (which has moved
// to its key), keeping a split it replaces as split.<key id>.json.
func finishSplit(cfg config, d splitDescription, log *slog.Logger) error {
	if err := retireSplit(cfg.dataDir, log); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(cfg.dataDir, pendingSplitFile), splitDescriptionPath(cfg.dataDir)); err != nil {
		return fmt.Errorf("the store now needs the split of %s: %w", pendingSplitFile, err)
	}
	if err := syncDir(cfg.dataDir); err != nil {
		return err
	}
	log.Warn("the root key is now split: start the server with -seal split; k custodians must unseal it at every start",
		"k", d.K, "n", d.N, "key_id", d.KeyID, "split_file", splitDescriptionPath(cfg.dataDir))
	return nil
}

// retireSplit keeps the current split.json, if any, as split.<key id>.json:
// the store no longer needs it, but backups taken before do, with the old
// shares.
func retireSplit(dataDir string, log *slog.Logger) error {
	d, err := readSplitDescription(splitDescriptionPath(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	kept := filepath.Join(dataDir, "split."+d.KeyID+".json")
	if err := os.Rename(splitDescriptionPath(dataDir), kept); err != nil {
		return err
	}
	log.Warn("the previous split's shares no longer open the store; backups taken before need them (k of the previous custodians)",
		"previous_key_id", d.KeyID, "previous_split_file", kept)
	return syncDir(dataDir)
}

// finishInterruptedSplit handles an Open error of a -to split run: when
// split.json.new names the key the store needs, an earlier run committed
// and only its files are left to finish (done).
func finishInterruptedSplit(cfg config, openErr error, log *slog.Logger) (done bool, err error) {
	needs, named := tokenvault.NeededKey(openErr)
	if !named || needs.Kind != "local" {
		return false, nil
	}
	pending, rerr := readSplitDescription(filepath.Join(cfg.dataDir, pendingSplitFile))
	switch {
	case rerr == nil && needs.KeyID == pending.KeyID:
		log.Info("finishing an interrupted move to a split root key", "key_id", pending.KeyID)
		if err := finishSplit(cfg, pending, log); err != nil {
			return true, err
		}
	case errors.Is(rerr, fs.ErrNotExist):
		// Interrupted after split.json was in place: only the old
		// root of trust's files are left to retire.
		current, err := readSplitDescription(splitDescriptionPath(cfg.dataDir))
		if err != nil || needs.KeyID != current.KeyID || cfg.seal == sealSplit {
			return false, nil
		}
		log.Info("finishing an interrupted move to a split root key", "key_id", current.KeyID)
	default:
		return false, nil
	}
	if cfg.seal == sealLocal {
		if err := os.Remove(filepath.Join(cfg.dataDir, "master.key")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return true, err
		}
	}
	return true, nil
}
