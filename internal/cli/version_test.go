package cli

import (
	"context"
	"strings"
	"testing"
)

// TestVersionPrintsStamp: the values a release build stamps (-X) are what
// tokenvault version prints, over the go command's build information (a
// go test binary has a version "(devel)" or none, and no VCS revision).
func TestVersionPrintsStamp(t *testing.T) {
	saved := [3]string{stampVersion, stampRevision, stampCommitted}
	t.Cleanup(func() { stampVersion, stampRevision, stampCommitted = saved[0], saved[1], saved[2] })
	stampVersion, stampRevision, stampCommitted = "v1.2.3", "abcdef0123456789", "2026-03-04T05:06:07Z"
	var out strings.Builder
	if err := versionCommand(context.Background(), nil, nil, &out, nil); err != nil {
		t.Fatal(err)
	}
	want := "tokenvault v1.2.3\nrevision abcdef0123456789\ncommitted 2026-03-04T05:06:07Z\nbuilt with go"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("version printed %q, want it to start with %q", out.String(), want)
	}
}
