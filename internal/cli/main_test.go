package cli

import (
	"os"
	"testing"
)

// TestMain removes the server binary the crash tests share (buildServer)
// once every test has ended.
func TestMain(m *testing.M) {
	code := m.Run()
	if serverBinary.dir != "" {
		os.RemoveAll(serverBinary.dir)
	}
	os.Exit(code)
}
