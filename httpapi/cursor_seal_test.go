package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/waybill/waybill/store"
)

// TestCursorsNotIssuedRefused: GET /shipments takes back the cursors it issued and refuses,
// 400 invalid_cursor, a well-formed one it did not issue: a made-up position, an issued cursor
// edited to another position, or one with its MAC altered.
func TestCursorsNotIssuedRefused(t *testing.T) {
	e := newEnv(t)
	for range 3 {
		e.createShipment(t, "CHEAPEST", "PDF")
	}
	type page struct {
		Data []struct{ ID string }
		Meta metadata `json:"metadata"`
	}
	first := decode[page](t, e.do("GET", "/shipments?first=1", "all", nil), http.StatusOK)
	if first.Meta.EndCursor == nil || !first.Meta.HasNextPage {
		t.Fatalf("first page metadata %+v; want an end cursor and a next page", first.Meta)
	}
	issued := *first.Meta.EndCursor
	next := decode[page](t, e.do("GET", "/shipments?first=1&after="+url.QueryEscape(issued), "all", nil), http.StatusOK)
	if len(next.Data) != 1 || next.Data[0].ID == first.Data[0].ID {
		t.Fatalf("the page after the issued cursor = %+v", next.Data)
	}

	position, mac, sealed := strings.Cut(issued, ".")
	if !sealed || mac == "" {
		t.Fatalf("the issued cursor %q carries no MAC: any well-formed position would be taken", issued)
	}
	key, err := decodeCursor(position)
	if err != nil {
		t.Fatalf("the issued cursor's position %q: %v", position, err)
	}
	moved := encodeCursor(store.Key{CreatedAt: key.CreatedAt - 1, ID: key.ID})
	flipped := []byte(mac)
	flipped[0] ^= 1
	for _, c := range []string{
		position,          // the bare position, as a client decoding cursors would make it
		moved,             // another position, unsealed
		moved + "." + mac, // another position under the issued MAC
		position + "." + string(flipped),
		issued + "x",
	} {
		for _, name := range []string{"after", "before"} {
			size := map[string]string{"after": "first", "before": "last"}[name]
			w := e.do("GET", "/shipments?"+size+"=1&"+name+"="+url.QueryEscape(c), "all", nil)
			got := decode[map[string]map[string]any](t, w, http.StatusBadRequest)
			if got["errors"]["code"] != "invalid_cursor" || got["errors"]["parameter"] != name {
				t.Errorf("%s=%q: %v; want 400 invalid_cursor on %s", name, c, got, name)
			}
		}
	}
}
