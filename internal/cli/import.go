package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/internal/transfer"
)

const importUsage = `Usage: tokenvault import -server URL [-key-file F] [-format ndjson|csv|hosted]
                         [-reject FILE] [-stop-on-error] [-state FILE] FILE

Imports the tokens of FILE into a running server (POST /tokens/import),
keeping their ids and created_at, in batches that each commit whole. The
key is a private application's holding token:import and token:create, read
from -key-file or TOKENVAULT_API_KEY (never a flag value: it would show in
ps). Formats (docs/transfer.md): ndjson, the exchange format; csv, a header
row then a token a row; hosted, the hosted service's export (a JSON array
of tokens or its list answer {"data": [...]}).

Streams FILE in bounded memory. On a terminal it shows a progress line
(count, rate, time left); at the end it prints a JSON summary (imported,
skipped, rejected, seconds) on stdout. A rejected line goes to the reject
file (its line number and reason, never its data) and the run goes on, or
stops after its batch with -stop-on-error (exit status 1).

Resumable: after each committed batch the state file (FILE.import-state by
default) records where the run is. Run the same command again after an
interruption (even kill -9): it continues there; the batch in flight at
the interruption is sent again and its tokens count as skipped. A FILE
that changed since (its size, or the hash of its head) is refused. The
state file is removed when the run completes.`

// importState is the state file of a run: where to resume, and what the
// run did so far. Written whole (a new file renamed over the old) after
// each committed batch.
type importState struct {
	Format   string `json:"format"`
	Size     int64  `json:"input_size"`
	HeadHash string `json:"input_head_sha256"`
	Offset   int64  `json:"offset"`
	Line     int64  `json:"line"`
	// RejectSize is the reject file's size at that point: a resumed run
	// cuts what the interrupted batch wrote, which it sends again.
	RejectSize int64   `json:"reject_size"`
	Imported   int64   `json:"imported"`
	Skipped    int64   `json:"skipped"`
	Rejected   int64   `json:"rejected"`
	Seconds    float64 `json:"seconds"`
}

// importSummary is the JSON line printed at the end of a run.
type importSummary struct {
	Imported int64   `json:"imported"`
	Skipped  int64   `json:"skipped"`
	Rejected int64   `json:"rejected"`
	Seconds  float64 `json:"seconds"`
	// Resumed is the line the run resumed after (0: from the start).
	Resumed int64 `json:"resumed_after_line,omitempty"`
	// Stopped is set when -stop-on-error stopped the run early.
	Stopped bool `json:"stopped_on_error,omitempty"`
}

// headBytes is how much of the input's start its hash covers.
const headBytes = 64 << 10

// importBatchBytes bounds the NDJSON of one batch, under the server's
// bound (httpapi.MaxImportBodyBytes).
const importBatchBytes = 4 << 20

type importFlags struct {
	addr, keyFile, format, reject, state string
	stopOnError                          bool
	batch                                int
}

func importCommand(ctx context.Context, args []string, getenv func(string) string, out, errOut io.Writer) error {
	var o importFlags
	fs := newFlagSet("import", importUsage)
	fs.envOnly = []struct{ name, usage string }{
		{"TOKENVAULT_API_KEY", "the key, when -key-file is not given (a secret: no flag)"},
	}
	fs.SetOutput(out)
	fs.StringVar(&o.addr, "server", "http://127.0.0.1:8080", "base `URL` of the running server")
	fs.Bind("server", "TOKENVAULT_SERVER")
	fs.StringVar(&o.keyFile, "key-file", "", "`file` holding the key (a private application's with token:import)")
	fs.StringVar(&o.format, "format", transfer.FormatNDJSON, "the input's `format`: ndjson, csv or hosted")
	fs.StringVar(&o.reject, "reject", "", "`file` to append rejected lines to (default FILE.rejects)")
	fs.StringVar(&o.state, "state", "", "the state `file` of a resumable run (default FILE.import-state)")
	fs.BoolVar(&o.stopOnError, "stop-on-error", false, "stop after the batch of the first rejected line")
	fs.IntVar(&o.batch, "batch", tokenvault.MaxImportBatch, "lines a batch (at most 1000)")
	if err := fs.parse(args, getenv); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.SetOutput(errOut)
		fs.Usage()
		return usageError{errors.New("import takes one FILE")}
	}
	if o.batch < 1 || o.batch > tokenvault.MaxImportBatch {
		return usageError{fmt.Errorf("-batch must be from 1 to %d", tokenvault.MaxImportBatch)}
	}
	key, err := importKey(o.keyFile, getenv)
	if err != nil {
		return err
	}
	file := fs.Arg(0)
	if o.state == "" {
		o.state = file + ".import-state"
	}
	if o.reject == "" {
		o.reject = file + ".rejects"
	}
	return runImport(ctx, client.New(o.addr, nil), key, file, o, out)
}

// importKey reads the key from keyFile, or else TOKENVAULT_API_KEY.
func importKey(keyFile string, getenv func(string) string) (tokenvault.Credential, error) {
	if keyFile != "" {
		b, err := os.ReadFile(keyFile)
		if err != nil {
			return "", fmt.Errorf("the key file: %w", err)
		}
		if k := strings.TrimSpace(string(b)); k != "" {
			return tokenvault.Credential(k), nil
		}
		return "", fmt.Errorf("the key file %s is empty", keyFile)
	}
	if k := strings.TrimSpace(getenv("TOKENVAULT_API_KEY")); k != "" {
		return tokenvault.Credential(k), nil
	}
	return "", errors.New("no key: give -key-file, or set TOKENVAULT_API_KEY")
}

func runImport(ctx context.Context, c *client.Client, key tokenvault.Credential, file string, o importFlags, out io.Writer) error {
	began := time.Now()
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	head, err := headHash(f)
	if err != nil {
		return err
	}
	st := importState{Format: o.format, Size: fi.Size(), HeadHash: head}
	resumed := int64(0)
	if prev, err := readImportState(o.state); err != nil {
		return err
	} else if prev != nil {
		if prev.Size != st.Size || prev.HeadHash != st.HeadHash || prev.Format != st.Format {
			return fmt.Errorf("%s changed since the interrupted run (its size, head or format differ from %s): remove the state file to import it from the start", file, o.state)
		}
		st = *prev
		resumed = st.Line
	}
	rejects, err := openRejects(o.reject, st.RejectSize)
	if err != nil {
		return err
	}
	defer rejects.Close()
	r, err := transfer.NewRawReader(o.format, f, st.Offset, st.Line)
	if err != nil {
		return err
	}
	progress := newImportProgress(out, st.Size, began, st)
	// The next batch is read while the last is sent: the file's parsing
	// and the server's commit overlap. One batch ahead at most, so memory
	// stays two batches whatever the file's size.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan readBatchResult, 1)
	go func() {
		defer close(batches)
		for {
			lines, err := readBatch(r, o.batch)
			select {
			case batches <- readBatchResult{lines, r.Offset(), r.Line(), err}:
			case <-ctx.Done():
				return
			}
			if err != nil || len(lines) == 0 {
				return
			}
		}
	}()
	stopped := false
	for b := range batches {
		if b.err != nil {
			return b.err
		}
		if len(b.lines) == 0 {
			break
		}
		res, err := c.ImportTokens(ctx, key, tokenvault.ImportBatch{Lines: b.lines})
		if err != nil {
			return fmt.Errorf("the batch of lines %d to %d: %w (run the command again to resume)", b.lines[0].Number, b.lines[len(b.lines)-1].Number, err)
		}
		for _, rj := range res.Rejects {
			if _, err := fmt.Fprintf(rejects, "%d\t%s\n", rj.Line, rj.Reason); err != nil {
				return err
			}
		}
		if err := rejects.Sync(); err != nil {
			return err
		}
		if st.RejectSize, err = rejects.Seek(0, io.SeekCurrent); err != nil {
			return err
		}
		st.Offset, st.Line = b.offset, b.line
		st.Imported += int64(res.Imported)
		st.Skipped += int64(res.Skipped)
		st.Rejected += int64(res.Rejected)
		if err := writeImportState(o.state, st); err != nil {
			return err
		}
		progress.show(st, b.offset)
		if stopped = o.stopOnError && res.Rejected > 0; stopped {
			break
		}
	}
	progress.done()
	sum := importSummary{Imported: st.Imported, Skipped: st.Skipped, Rejected: st.Rejected,
		Seconds: time.Since(began).Seconds(), Resumed: resumed, Stopped: stopped}
	if !stopped {
		if err := os.Remove(o.state); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	b, _ := json.Marshal(sum)
	fmt.Fprintf(out, "%s\n", b)
	if stopped {
		return fmt.Errorf("stopped on a rejected line (see %s); run the command again to go on", o.reject)
	}
	return nil
}

// readBatchResult is a batch read ahead, with where the reader was after
// it.
type readBatchResult struct {
	lines        []tokenvault.ImportLine
	offset, line int64
	err          error
}

// readBatch reads up to n lines, fewer when their JSON would pass
// importBatchBytes.
func readBatch(r transfer.Reader, n int) ([]tokenvault.ImportLine, error) {
	var batch []tokenvault.ImportLine
	size := 0
	for len(batch) < n && size < importBatchBytes-transfer.MaxLineBytes {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		batch = append(batch, l)
		size += approxSize(l)
	}
	return batch, nil
}

// approxSize is about how many bytes l takes as a line of NDJSON.
func approxSize(l tokenvault.ImportLine) int {
	if l.Raw != nil {
		return len(l.Raw) + 1
	}
	b, _ := json.Marshal(l)
	return len(b) + 1
}

// headHash is the hex SHA-256 of f's first headBytes bytes.
func headHash(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, headBytes)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readImportState reads the state file; nil when there is none.
func readImportState(path string) (*importState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st importState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("the state file %s is damaged (%v): remove it to import from the start", path, err)
	}
	return &st, nil
}

// writeImportState replaces the state file with st, durably: a new file
// written and synced, then renamed over the old.
func writeImportState(path string, st importState) error {
	b, _ := json.Marshal(st)
	_, err := writeFileAtomically(path, func(f *os.File) error {
		if _, err := f.Write(append(b, '\n')); err != nil {
			return err
		}
		return f.Sync()
	})
	return err
}

// openRejects opens the reject file for appending at size (0600), cutting
// what an interrupted run wrote past it.
func openRejects(path string, size int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
