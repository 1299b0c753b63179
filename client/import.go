package client

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/transfer"
)

const ndjsonContentType = "application/x-ndjson"

// ImportTokens sends batch as one POST /tokens/import (NDJSON), as
// tokenvault.Vault.ImportTokens does in process. The rejects name each
// line's Number: the lines are sent in order and the server's body line
// numbers are mapped back to them, so a batch may skip numbers (lines the
// caller rejected itself, with Problem set, are not sent and come back as
// rejects).
//
// Returns what ImportTokens returns (Invalid for more than
// tokenvault.MaxImportBatch lines, PermissionDenied without token:import,
// Unauthenticated, RateLimited, StorageFull, Internal), and TooLarge for a
// body over the server's bound (httpapi.MaxImportBodyBytes).
func (c *Client) ImportTokens(ctx context.Context, key tokenvault.Credential, batch tokenvault.ImportBatch) (*tokenvault.ImportResult, error) {
	var body bytes.Buffer
	var sent []int64
	var local []tokenvault.ImportReject
	for _, l := range batch.Lines {
		b, err := transfer.MarshalLine(l)
		if l.Problem == "" && err != nil {
			l.Problem = "data: does not encode as JSON"
		}
		if l.Problem != "" {
			local = append(local, tokenvault.ImportReject{Line: l.Number, Reason: l.Problem})
			continue
		}
		body.Write(b)
		body.WriteByte('\n')
		sent = append(sent, l.Number)
	}
	out := &tokenvault.ImportResult{Rejects: []tokenvault.ImportReject{}}
	if len(sent) > 0 {
		err := c.do(ctx, call{method: "POST", path: "/tokens/import", key: key,
			body: json.RawMessage(body.Bytes()), contentType: ndjsonContentType, out: out})
		if err != nil {
			return nil, err
		}
		for i := range out.Rejects {
			if n := out.Rejects[i].Line; n >= 1 && int(n) <= len(sent) {
				out.Rejects[i].Line = sent[n-1]
			}
		}
	}
	out.Rejects = append(out.Rejects, local...)
	sort.SliceStable(out.Rejects, func(i, j int) bool { return out.Rejects[i].Line < out.Rejects[j].Line })
	out.Rejected = len(out.Rejects)
	return out, nil
}
