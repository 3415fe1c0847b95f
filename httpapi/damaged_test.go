package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestDamagedRecordIsNotServed: a stored shipment or label whose packed value has one byte
// changed (a disk or a hand gone wrong) is answered 500 and logged with the record named, never
// served as a 200 with broken or wrong data, alone or in a list: a byte in the middle, a bit
// of the version byte that makes the value one of a version without a CRC (a reviewer's
// damage, once served as a 200 with broken JSON), or a byte more at its end.
func TestDamagedRecordIsNotServed(t *testing.T) {
	for name, damage := range map[string]func([]byte) []byte{
		"a byte in the middle": func(b []byte) []byte { b[len(b)/2] ^= 0x20; return b },
		"the version byte":     func(b []byte) []byte { b[0] ^= 0x04; return b },
		"a byte more":          func(b []byte) []byte { return append(b, 'A') },
	} {
		t.Run(name, func(t *testing.T) { testDamagedRecord(t, damage) })
	}
}

func testDamagedRecord(t *testing.T, damage func([]byte) []byte) {
	e := newEnv(t)
	var logs bytes.Buffer
	e.api.log = slog.New(slog.NewJSONHandler(&logs, nil))
	s := e.createShipment(t, "ALL", "PDF")
	if w := e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil); w.Code != http.StatusOK {
		t.Fatalf("buy: %d %s", w.Code, w.Body)
	}
	var label string
	if err := e.sql.QueryRow(`SELECT id FROM shipping_labels WHERE shipment_id = $1`, s.Data.ID).Scan(&label); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ table, id, path string }{
		{"shipments", s.Data.ID, "/shipments/" + s.Data.ID},
		{"shipping_labels", label, "/shipping_labels/" + label},
	} {
		var packed []byte
		if err := e.sql.QueryRow(`SELECT packed FROM `+c.table+` WHERE id = $1`, c.id).Scan(&packed); err != nil {
			t.Fatal(err)
		}
		if _, err := e.sql.Exec(`UPDATE `+c.table+` SET packed = $1 WHERE id = $2`, damage(packed), c.id); err != nil {
			t.Fatal(err)
		}
		logs.Reset()
		w := e.do("GET", c.path, "all", nil)
		if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), `"internal_error"`) {
			t.Errorf("GET %s of a damaged record: %d %s; want 500 internal_error", c.path, w.Code, w.Body)
		}
		if !strings.Contains(logs.String(), "packed value") || !strings.Contains(logs.String(), c.id) {
			t.Errorf("GET %s of a damaged record logged %q; want the damage and the record named", c.path, logs.String())
		}
	}
	// A list holding the damaged shipment fails whole, and its log line names the shipment, which
	// its path does not.
	logs.Reset()
	if w := e.do("GET", "/shipments?first=50", "all", nil); w.Code != http.StatusInternalServerError {
		t.Errorf("GET /shipments holding a damaged record: %d %s; want 500", w.Code, w.Body)
	}
	if !strings.Contains(logs.String(), "packed value") || !strings.Contains(logs.String(), s.Data.ID) {
		t.Errorf("GET /shipments holding a damaged record logged %q; want the damage and the shipment named", logs.String())
	}
}
