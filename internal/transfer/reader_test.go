package transfer

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readAll reads every line of src in format, stopping after stopAfter
// lines to resume with a new Reader from where the first stopped, as the
// CLI does after a kill.
func readAll(t *testing.T, format, src string, stopAfter int) []Line {
	t.Helper()
	f := strings.NewReader(src)
	r, err := NewReader(format, f, 0, 0)
	if err != nil {
		t.Fatalf("NewReader(%s): %v", format, err)
	}
	var out []Line
	for {
		if len(out) == stopAfter {
			if r, err = NewReader(format, f, r.Offset(), r.Line()); err != nil {
				t.Fatalf("NewReader(%s) resuming: %v", format, err)
			}
		}
		l, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, l)
	}
}

type brief struct {
	Number  int64
	ID      string
	Data    string
	Meta    map[string]string
	Cont    []string
	Problem string
}

func briefs(lines []Line) []brief {
	var out []brief
	for _, l := range lines {
		d, _ := json.Marshal(l.Data)
		out = append(out, brief{l.Number, l.ID, string(d), l.Metadata, l.Containers, l.Problem})
	}
	return out
}

func TestReadersReadEachFormatAndResume(t *testing.T) {
	card := `{"expiration_month":12,"expiration_year":2035,"number":"4242424242424242"}`
	tests := []struct {
		format, src string
		want        []brief
	}{
		{FormatNDJSON, `{"id":"t01","type":"token","data":"a"}` + "\n\n" +
			`{"id":"t02","type":"card","data":` + card + `,"metadata":{"k":"v"}}` + "\r\n" +
			"not json\n" + `{"id":"t04","type":"token","data":"d","containers":["/x/"]}`,
			[]brief{{1, "t01", `"a"`, nil, nil, ""}, {3, "t02", card, map[string]string{"k": "v"}, nil, ""},
				{4, "", "null", nil, nil, "not valid JSON"}, {5, "t04", `"d"`, nil, []string{"/x/"}, ""}}},
		{FormatCSV, "id,type,data.number,data.expiration_month,data.expiration_year,metadata.k,containers,tenant_id\n" +
			"t01,card,4242424242424242,12,2035,v,/pci/high/;/x/,ignored\n" +
			"t02,card,\"4242424242424242\",12,2035,\"two\nlines\",,\n" +
			"t03,card,1,2\n" +
			"t04,card,4242424242424242,12,2035,,\"[\"\"/y/\"\"]\",\n",
			[]brief{{2, "t01", card, map[string]string{"k": "v"}, []string{"/pci/high/", "/x/"}, ""},
				{3, "t02", card, map[string]string{"k": "two\nlines"}, nil, ""},
				{5, "", "null", nil, nil, "has 4 cells, the header 8"},
				{6, "t04", card, nil, []string{"/y/"}, ""}}},
		{FormatHosted, `{"pagination":{"total_items":3},"data":[` +
			`{"id":"t01","type":"token","data":"a","tenant_id":"x","fingerprint":"f","created_by":"u"},` +
			`{"id":"t02","type":"card","data":` + card + `,"privacy":{"classification":"pci","impact_level":"high"}},` +
			`7,` +
			`{"id":"t04","type":"token","data":{"n":1},"containers":["/z/"]}]}`,
			[]brief{{1, "t01", `"a"`, nil, nil, ""}, {2, "t02", card, nil, []string{"/pci/high/"}, ""},
				{3, "", "null", nil, nil, "not a JSON object"}, {4, "t04", `{"n":1}`, nil, []string{"/z/"}, ""}}},
		{FormatHosted, `[{"id":"t01","type":"token","data":"a"},{"id":"t02","type":"token","data":"b"}]`,
			[]brief{{1, "t01", `"a"`, nil, nil, ""}, {2, "t02", `"b"`, nil, nil, ""}}},
	}
	for _, tc := range tests {
		for _, stop := range []int{-1, 1, 2} {
			got := briefs(readAll(t, tc.format, tc.src, stop))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s stopping after %d lines (-want +got):\n%s", tc.format, stop, diff)
			}
		}
	}
}

func TestCSVRefusesUnknownColumns(t *testing.T) {
	_, err := NewReader(FormatCSV, strings.NewReader("id,type,colour\n"), 0, 0)
	if err == nil || !strings.Contains(err.Error(), `"colour"`) {
		t.Errorf("NewReader(csv with colour) = %v, want the unknown column named", err)
	}
	_, err = NewReader(FormatHosted, strings.NewReader(`{"items": []}`), 0, 0)
	if err == nil {
		t.Errorf("NewReader(hosted, no data) = nil error")
	}
}
