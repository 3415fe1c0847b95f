package httpapi

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/waybill/waybill/store"
)

func TestParsePage(t *testing.T) {
	tests := []struct {
		query     string
		want      store.Page
		wantParam string
	}{
		{"", store.Page{Number: 1, Size: 50}, ""},
		{"page=3&page_size=250", store.Page{Number: 3, Size: 250}, ""},
		{"page=0", store.Page{}, "page"},
		{"page=-1", store.Page{}, "page"},
		{"page=x", store.Page{}, "page"},
		{"page=99999999999999999999", store.Page{}, "page"},
		{"page_size=0", store.Page{}, "page_size"},
		{"page_size=251", store.Page{}, "page_size"},
		{"page_size=1.5", store.Page{}, "page_size"},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.query)
		got, err := parsePage(q)
		var e *Error
		switch {
		case tt.wantParam == "" && (err != nil || got != tt.want):
			t.Errorf("parsePage(%q) = %v, %v; want %v", tt.query, got, err, tt.want)
		case tt.wantParam != "" && (!errors.As(err, &e) || e.Code != "invalid_parameter" || e.Parameter != tt.wantParam):
			t.Errorf("parsePage(%q) = %v; want invalid_parameter on %s", tt.query, err, tt.wantParam)
		}
	}
}

func TestParseKeyset(t *testing.T) {
	cursor := encodeCursor(store.Key{CreatedAt: 1700000000000000, ID: "00000000-0000-7000-8000-00000000000a"})
	tests := []struct {
		query    string
		wantOK   bool
		wantCode string
		want     store.Keyset
	}{
		{"", false, "", store.Keyset{}},
		{"page=2", false, "", store.Keyset{}},
		{"first=10", true, "", store.Keyset{Size: 10}},
		{"after=" + cursor, true, "", store.Keyset{Size: 50, Key: &store.Key{CreatedAt: 1700000000000000, ID: "00000000-0000-7000-8000-00000000000a"}}},
		{"last=5&before=" + cursor, true, "", store.Keyset{Size: 5, Before: true, Key: &store.Key{CreatedAt: 1700000000000000, ID: "00000000-0000-7000-8000-00000000000a"}}},
		{"first=10&page=1", false, "pagination_conflict", store.Keyset{}},
		{"page_size=10&after=" + cursor, false, "pagination_conflict", store.Keyset{}},
		{"first=10&last=10", false, "pagination_conflict", store.Keyset{}},
		{"after=" + cursor + "&before=" + cursor, false, "pagination_conflict", store.Keyset{}},
		{"first=0", false, "invalid_parameter", store.Keyset{}},
		{"first=251", false, "invalid_parameter", store.Keyset{}},
		{"after=bogus", false, "invalid_cursor", store.Keyset{}},
		{"after=", false, "invalid_cursor", store.Keyset{}},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.query)
		got, ok, err := parseKeyset(q)
		if tt.wantCode != "" {
			var e *Error
			if !errors.As(err, &e) || e.Code != tt.wantCode {
				t.Errorf("parseKeyset(%q) = %v; want %s", tt.query, err, tt.wantCode)
			}
			continue
		}
		if err != nil || ok != tt.wantOK || got.Size != tt.want.Size || got.Before != tt.want.Before ||
			(got.Key == nil) != (tt.want.Key == nil) || (got.Key != nil && *got.Key != *tt.want.Key) {
			t.Errorf("parseKeyset(%q) = %+v, %v, %v; want %+v, %v", tt.query, got, ok, err, tt.want, tt.wantOK)
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	k := store.Key{CreatedAt: 1763782923123456, ID: "019a1b2c-3d4e-7f00-8000-0123456789ab"}
	got, err := decodeCursor(encodeCursor(k))
	if err != nil || got != k {
		t.Fatalf("decodeCursor(encodeCursor(%v)) = %v, %v", k, got, err)
	}
	for _, bad := range []string{"", "!!", "djE6MTox", encodeCursor(store.Key{CreatedAt: 1, ID: "not-a-uuid"}),
		"djE6LTE6MDAwMDAwMDAtMDAwMC03MDAwLTgwMDAtMDAwMDAwMDAwMDBh"} {
		if _, err := decodeCursor(bad); err == nil {
			t.Errorf("decodeCursor(%q) = nil error; want invalid", bad)
		}
	}
}

// TestWriteEncodedList: a list written from items encoded one at a time is the same bytes, and
// Content-Length, as writeList's of the items themselves; also empty.
func TestWriteEncodedList(t *testing.T) {
	type item struct {
		Code string `json:"code"`
		Note string `json:"note"`
	}
	meta := offsetMeta(store.Page{Number: 2, Size: 2}, store.List[item]{Total: 5, HasNext: true, HasPrev: true})
	for _, items := range [][]item{{}, {{"A", "<&>"}}, {{"A", "x"}, {"B", "é\u2028"}}} {
		var encoded [][]byte
		for _, it := range items {
			b, err := json.Marshal(it)
			if err != nil {
				t.Fatal(err)
			}
			encoded = append(encoded, b)
		}
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		writeList(want, items, meta)
		writeEncodedList(got, encoded, meta)
		if got.Body.String() != want.Body.String() || got.Header().Get("Content-Length") != want.Header().Get("Content-Length") {
			t.Errorf("writeEncodedList = %q (Content-Length %s); writeList = %q (%s)", got.Body, got.Header().Get("Content-Length"),
				want.Body, want.Header().Get("Content-Length"))
		}
	}
}
