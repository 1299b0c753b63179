package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
)

const tokenAccessUsage = `Usage: tokenvault token-access [flags] TOKEN-ID
       tokenvault token-access [flags] -metadata KEY=VALUE [-metadata ...]

Prints who accessed a token's data on a running server (GET
/tokens/{id}/access), or the data of a data subject's tokens, found by
their metadata (POST /tokens/access/search; at most 100 tokens), newest
first: time, actor, application, channel, transform and token, every
page. The key is a management application's holding token:access:read,
from TOKENVAULT_API_KEY (a secret: no flag).`

// metadataFlag collects -metadata KEY=VALUE entries.
type metadataFlag map[string]string

func (m metadataFlag) String() string { return "" }

func (m metadataFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want KEY=VALUE")
	}
	m[k] = v
	return nil
}

// tokenAccessCommand runs token-access.
func tokenAccessCommand(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
	fs := newFlagSet("token-access", tokenAccessUsage)
	fs.envOnly = []struct{ name, usage string }{
		{"TOKENVAULT_API_KEY", "a management key holding token:access:read (a secret: no flag)"},
	}
	fs.SetOutput(out)
	var server string
	fs.StringVar(&server, "server", "http://127.0.0.1:8080", "base `URL` of the running server")
	fs.Bind("server", "TOKENVAULT_SERVER")
	md := metadataFlag{}
	fs.Var(md, "metadata", "a `KEY=VALUE` of the data subject's tokens' metadata (repeat for more)")
	if err := fs.parse(args, getenv); err != nil {
		return err
	}
	if want := map[bool]int{true: 0, false: 1}[len(md) > 0]; fs.NArg() != want {
		fs.SetOutput(errOut)
		fs.Usage()
		fmt.Fprintln(errOut)
		return usageError{errors.New("token-access takes one TOKEN-ID, or -metadata and no argument")}
	}
	key := tokenvault.Credential(strings.TrimSpace(getenv("TOKENVAULT_API_KEY")))
	if key == "" {
		return errors.New("no key: set TOKENVAULT_API_KEY to a management key holding token:access:read")
	}
	c := client.New(server, nil)
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tACTOR\tAPPLICATION\tCHANNEL\tTRANSFORM\tPURPOSE\tTOKEN")
	page := tokenvault.PageRequest{Size: tokenvault.MaxPageSize}
	for {
		var data []tokenvault.TokenAccess
		var after string
		if len(md) > 0 {
			p, err := c.SubjectAccess(ctx, key, tokenvault.SubjectAccessRequest{Metadata: md, PageRequest: page})
			if err != nil {
				return err
			}
			data, after = p.Data, p.Pagination.After
		} else {
			p, err := c.TokenAccessPage(ctx, key, fs.Arg(0), page)
			if err != nil {
				return err
			}
			data, after = p.Data, p.Pagination.After
		}
		for _, a := range data {
			transform := a.Transform
			if transform == "" {
				transform = "-" // a line written before transforms were recorded
			}
			purpose := a.Purpose
			if purpose == "" {
				purpose = "-" // the call named no purpose of access
			}
			fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\t%s\t%s\t%s\n", a.CreatedAt.UTC().Format(time.RFC3339Nano), a.ActorType, a.ActorID,
				a.ApplicationID, a.Channel, transform, purpose, a.TokenID)
		}
		if after == "" {
			return tw.Flush()
		}
		page.Start = after
	}
}
