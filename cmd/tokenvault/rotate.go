package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tokenvault/tokenvault"
)

// Master key rotation with key files, safe against a crash at any point.
//
// A rotation first writes the new key to master.key.new (0600, synced),
// then re-wraps every keyring in the store with it (one transaction), and
// only then renames master.key.new over master.key. A start that finds
// master.key.new finishes whatever was interrupted: it opens the store
// knowing both keys, re-wraps again (harmless if the first attempt had
// committed) and renames. At no moment does the store hold data that no
// key file can open.

const pendingKeyFile = "master.key.new"

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
	f, err := os.CreateTemp(dataDir, pendingKeyFile+".tmp*") // 0600
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	_, err = f.WriteString(hex.EncodeToString(key) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dataDir, pendingKeyFile))
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return key, syncDir(dataDir)
}

// finishRotation re-wraps the store with newKey and makes master.key.new
// the master key file.
func finishRotation(ctx context.Context, v *tokenvault.Vault, dataDir string, newKey []byte) error {
	if err := v.RotateMasterKey(ctx, newKey); err != nil {
		return fmt.Errorf("rotate master key: %w", err)
	}
	if err := os.Rename(filepath.Join(dataDir, pendingKeyFile), filepath.Join(dataDir, "master.key")); err != nil {
		return fmt.Errorf("rotate master key: the store now needs %s: %w", pendingKeyFile, err)
	}
	return syncDir(dataDir)
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
