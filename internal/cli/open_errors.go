package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/tokenvault/tokenvault/store/bolt"
)

// damagedStoreError says what to do about a store file bbolt refused as
// damaged (store/bolt's ErrDamaged): err names the file and the damage;
// the rest says it cannot be served and how to restore it from a backup
// (docs/operations.md, "Backup and restore"), without touching it.
func damagedStoreError(err error, dataDir string) error {
	return fmt.Errorf("%w\nthe store cannot be served or repaired in place; nothing was changed. Restore it from a backup into a new data directory:\n"+
		"  tokenvault restore -i BACKUP -data NEWDIR -master-key-file %s\n"+
		"  tokenvault serve -data NEWDIR\n"+
		"(the master key the backup was taken under; see docs/operations.md, \"Backup and restore\"), and keep the damaged file for inspection",
		err, filepath.Join(dataDir, "master.key"))
}

// missingKeyFileError is what serve says when <data>/master.key is missing
// while the store in the data directory was sealed with a key: the key
// file was deleted or not copied, which is not a wrong key, or the store's
// keys are in an HSM or KMS and -seal was not given (the store does not
// say which). (The key serve
// made for a first run is removed again before this is returned.)
func missingKeyFileError(dataDir, where string) error {
	return fmt.Errorf("the master key file %s is missing, and the store in %s was sealed with a key: "+
		"put the key file back (from where you keep it apart from the data), or give the key in TOKENVAULT_MASTER_KEY or -master-key-file; "+
		"if the store's keys are in an HSM or KMS instead, give -seal and its settings; "+
		"without its key the store cannot be opened",
		filepath.Join(dataDir, "master.key"), where)
}

// isDamaged reports whether err says the store file is damaged.
func isDamaged(err error) bool { return errors.Is(err, bolt.ErrDamaged) }
