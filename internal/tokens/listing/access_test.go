package listing

import (
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TestAccessOfALine: a read line is an access; one written before
// channels and applications were recorded gets its channel from its
// message and an application's own id as its application.
func TestAccessOfALine(t *testing.T) {
	key := barrier.Tenant(testTenant).Logs().Key(strings.Repeat("0", auditlog.SuffixLen))
	old := accessOf(key, &auditlog.LineRecord{Line: auditchain.Line{EntityID: "tok", ActorID: "app-1", ActorType: unit.ActorApplication,
		Message: "Token used by proxy"}})
	if old.TokenID != "tok" || old.ApplicationID != "app-1" || old.Channel != unit.ChannelProxy || old.ID == "" {
		t.Errorf("access of an old line = %+v", old)
	}
	s := accessOf(key, &auditlog.LineRecord{Line: auditchain.Line{ActorID: "ses-1", ActorType: unit.ActorSession, Application: "app-2",
		Channel: unit.ChannelGet, Transform: "mask", Message: "Token read (listed)"}})
	if s.ApplicationID != "app-2" || s.Channel != unit.ChannelGet || s.Transform != "mask" {
		t.Errorf("access of a session's line = %+v", s)
	}
	for msg, want := range map[string]string{
		"Token read": unit.ChannelGet, "Token read (listed)": unit.ChannelList, "Token read (searched)": unit.ChannelSearch,
		"Token detokenized": unit.ChannelDetokenize, "Token used by proxy": unit.ChannelProxy,
		"Token used by reactor": unit.ChannelReactor, "Token read (deduplicated create)": unit.ChannelCreate, "Other": "",
	} {
		if got := legacyChannel(msg); got != want {
			t.Errorf("legacyChannel(%q) = %q, want %q", msg, got, want)
		}
	}
}

// TestAccessPages: the lines of several tokens merge newest first and are
// cut to the page, whose total is a lower bound (one more when more
// follow) and whose after is the last line's position.
func TestAccessPages(t *testing.T) {
	e := func(pos string) AccessEntry { return AccessEntry{Pos: pos, TokenAccess: TokenAccess{ID: pos}} }
	all, more := MergeAccess([]AccessEntry{e("a1"), e("a3"), e("a2"), e("a5")}, false, 3)
	if !more || len(all) != 3 || all[0].Pos != "a5" || all[2].Pos != "a2" {
		t.Fatalf("MergeAccess = %v, %v; want a5 a3 a2 and more", all, more)
	}
	data, p := AccessPage(all, more, 3)
	if len(data) != 3 || data[0].ID != "a5" || p.TotalItems != 4 || p.After != paging.EncodeCursor("a2") {
		t.Errorf("AccessPage = %v, %+v", data, p)
	}
	data, p = AccessPage(nil, false, 3)
	if data == nil || len(data) != 0 || p.TotalItems != 0 || p.After != "" {
		t.Errorf("AccessPage of nothing = %#v, %+v; want an empty list", data, p)
	}
	for _, tc := range []struct {
		req  paging.Request
		says string
	}{
		{paging.Request{Page: 2}, "page"},
		{paging.Request{Start: paging.EncodeCursor("short")}, "start"},
	} {
		if _, err := ResolveAccessPage(tc.req); unit.ErrorKind(err) != unit.Invalid || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("ResolveAccessPage(%+v) = %v, want Invalid naming %s", tc.req, err, tc.says)
		}
	}
	pos := strings.Repeat("0", auditlog.SuffixLen)
	if pg, err := ResolveAccessPage(paging.Request{Start: paging.EncodeCursor(pos), Size: 5}); err != nil || pg.Start != pos || pg.Size != 5 {
		t.Errorf("ResolveAccessPage of a line's cursor = %+v, %v", pg, err)
	}
}
