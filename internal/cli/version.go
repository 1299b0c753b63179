package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
)

// What a release build stamps with -ldflags -X (go run ./internal/release
// does): a build from a source archive, or one whose VCS information the
// go command left out (-buildvcs=false, a copy of the tree without .git),
// still says what it is. Empty in any other build, where version falls
// back to the module's build information.
var (
	stampVersion   string // -X github.com/tokenvault/tokenvault/internal/cli.stampVersion=v1.2.3
	stampRevision  string // -X ...internal/cli.stampRevision=<full commit hash>
	stampCommitted string // -X ...internal/cli.stampCommitted=<commit time, RFC 3339>
)

// buildVersion is what tokenvault version prints.
type buildVersion struct {
	Version   string // the release's version, or the module's ("(devel)" for a build in a clone)
	Revision  string // the commit, with " (modified)" when the tree had changes
	Committed string // the commit's time
	GoVersion string // the toolchain that built the binary
}

// readBuildVersion combines the stamped values, which win, with the
// build information the go command records. ok is false when neither
// says anything.
func readBuildVersion() (bv buildVersion, ok bool) {
	if info, found := debug.ReadBuildInfo(); found {
		ok = true
		bv.Version, bv.GoVersion = info.Main.Version, info.GoVersion
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			if settings["vcs.modified"] == "true" {
				rev += " (modified)"
			}
			bv.Revision = rev
		}
		bv.Committed = settings["vcs.time"]
	}
	for _, s := range []struct{ stamp, field *string }{{&stampVersion, &bv.Version}, {&stampRevision, &bv.Revision}, {&stampCommitted, &bv.Committed}} {
		if *s.stamp != "" {
			*s.field, ok = *s.stamp, true
		}
	}
	return bv, ok
}

// versionCommand prints the version, revision and commit time of this
// build: the values a release build stamped, else the go command's build
// information.
func versionCommand(_ context.Context, args []string, _ func(string) string, out, _ io.Writer) error {
	fs := newFlagSet("version", "Usage: tokenvault version\n\nPrints the version and the VCS revision of this build (stamped by a release build, else\nthe go command's build information).")
	fs.SetOutput(out)
	if err := fs.parse(args, func(string) string { return "" }); err != nil {
		return err
	}
	bv, ok := readBuildVersion()
	if !ok {
		return errors.New("this binary carries no build information")
	}
	fmt.Fprintf(out, "tokenvault %s\n", bv.Version)
	if bv.Revision != "" {
		fmt.Fprintf(out, "revision %s\n", bv.Revision)
	}
	if bv.Committed != "" {
		fmt.Fprintf(out, "committed %s\n", bv.Committed)
	}
	if bv.GoVersion != "" {
		fmt.Fprintf(out, "built with %s\n", bv.GoVersion)
	}
	return nil
}
