package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// A stamp is what a release writes into the binary with -X.
type stamp struct {
	Version   string // v1.2.3, or devel-<short commit> between tags
	Revision  string // the full commit hash, with -modified for a tree with changes
	Committed string // the commit's time, RFC 3339
}

// readStamp fills what given leaves empty from git in dir. A build from a
// tree without git must give -version and -revision.
func readStamp(ctx context.Context, dir string, given stamp) (stamp, error) {
	s := given
	if s.Version != "" && s.Revision != "" {
		return s, s.check()
	}
	gitOut := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	head, err := gitOut("rev-parse", "HEAD")
	if err != nil {
		return s, errors.New("no git commit to stamp (not a git checkout, or no git): give -version and -revision")
	}
	status, err := gitOut("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return s, fmt.Errorf("git status: %w", err)
	}
	modified := status != ""
	if s.Revision == "" {
		s.Revision = head
		if modified {
			s.Revision += "-modified"
		}
	}
	if s.Version == "" {
		if v, err := gitOut("describe", "--tags", "--dirty", "--match", "v*"); err == nil && v != "" {
			s.Version = v
		} else {
			s.Version = "devel-" + head[:12]
			if modified {
				s.Version += "-dirty"
			}
		}
	}
	if s.Committed == "" {
		if t, err := gitOut("show", "-s", "--format=%cI", "HEAD"); err == nil {
			s.Committed = t
		}
	}
	return s, s.check()
}

// check refuses values that -ldflags would split or unquote.
func (s stamp) check() error {
	for _, v := range []string{s.Version, s.Revision, s.Committed} {
		if strings.ContainsAny(v, "'\"\\ \t\n") {
			return fmt.Errorf("%q: a stamped value may not hold quotes, backslashes or spaces", v)
		}
	}
	return nil
}
