package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// subjectKeysFile is the subject key store of a bbolt data directory
// (docs/erasure.md): a file of its own, backed up on its own
// (`tokenvault backup -subject-keys`).
const subjectKeysFile = "subject-keys.db"

// subjectKeysSchema is the PostgreSQL schema of the subject key store:
// the data's schema with this suffix, a table of its own.
const subjectKeysSchema = "_subject_keys"

// openSubjectKeys opens the subject key store beside the data store:
// <data>/subject-keys.db with bbolt, the schema <schema>_subject_keys with
// PostgreSQL.
func openSubjectKeys(ctx context.Context, cfg config) (store.Store, error) {
	if cfg.store == "postgres" {
		schema := cfg.schema
		if schema == "" {
			schema = "tokenvault"
		}
		s, err := postgres.Open(ctx, cfg.dsn, &postgres.Options{Schema: schema + subjectKeysSchema})
		if err != nil {
			return nil, fmt.Errorf("the subject key store: %w", err)
		}
		if err := s.Migrate(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("the subject key store: %w", err)
		}
		return s, nil
	}
	path := filepath.Join(cfg.dataDir, subjectKeysFile)
	s, err := bolt.Open(path, nil)
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("a tokenvault is already running on the data directory %s (%s is locked by another process): stop it first, or give another directory with -data or TOKENVAULT_DATA", cfg.dataDir, path)
		}
		return nil, fmt.Errorf("the subject key store %s: %w", path, err)
	}
	return s, nil
}
