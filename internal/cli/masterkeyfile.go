package cli

import "fmt"

// withMasterKeyFile returns getenv with TOKENVAULT_MASTER_KEY read from
// path (-master-key-file), when path is set: the key then takes the one
// road a key given from outside takes (no <data>/master.key is read or
// made, rotate-master-key leaves it to whoever writes the file). The file
// is read once, at start; its content goes nowhere else (not into the
// process environment, which workers and children could see), and an
// error names the file, never what it holds.
func withMasterKeyFile(getenv func(string) string, path string) (func(string) string, error) {
	if path == "" {
		return getenv, nil
	}
	key, err := readMasterKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("-master-key-file: %w", err)
	}
	hexKey := fmt.Sprintf("%x", key)
	return func(name string) string {
		if name == "TOKENVAULT_MASTER_KEY" {
			return hexKey
		}
		return getenv(name)
	}, nil
}
