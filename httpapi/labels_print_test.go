package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping/tooltest"
)

// impbCard is a USPS-like contract: IMpb numbers, the first 9261292700768711948021.
const impbCard = `{"name": "USPS Ground Advantage", "effective_from": "2026-01-01", "services": [{"code": "GROUND",
 "name": "Ground Advantage", "transit_days": [1, 2, 3, 3, 4, 4, 5, 5], "weight_breaks_oz": [16, 32],
 "prices_cents": [[500, 520, 540, 560, 580, 600, 620, 640], [600, 620, 640, 660, 680, 700, 720, 740]]}],
 "tracking": {"scheme": "usps_impb", "mailer_id": "927007687", "service_type_codes": {"GROUND": "612"},
 "range_start": 1194802, "range_end": 1199999}}`

// TestLabelPrintedAsTheCarrierPrintsIt buys labels of an operator-loaded IMpb carrier through
// the API: the label's barcode is GS1-128 with the routing code as zbarimg --xml reads it (the
// GS1 modifier; 420 and the destination's ZIP, GS, the tracking number), and the label prints
// the card's name, not the carrier's code. A carrier of another scheme keeps plain Code 128.
func TestLabelPrintedAsTheCarrierPrintsIt(t *testing.T) {
	e := newEnv(t)
	decode[any](t, e.do("PUT", "/admin/carriers/USPSGA", "admin", impbCard), http.StatusCreated)
	decode[any](t, e.do("PUT", "/admin/carriers/ACMEX", "admin", acmeCard), http.StatusCreated)
	decode[any](t, e.do("PUT", "/admin/rate_shopping_profiles/mail", "admin", `{"name": "Mail", "carriers": ["USPSGA", "ACMEX"]}`), http.StatusCreated)
	body := func(format string) string {
		b := strings.Replace(shipmentBody("ALL", format), `"New York", "state": "NY", "zip": "10001"`, `"Austin", "state": "TX", "zip": "78701-1234"`, 1)
		return strings.Replace(b, "{", `{"rate_shopping_profile": "mail", `, 1)
	}
	buy := func(format, carrier string) (trackingCode string, doc []byte) {
		t.Helper()
		s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", body(format)), http.StatusCreated)
		for _, r := range s.Data.ShippingRates {
			if r.Carrier == carrier {
				b := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+r.ID, "all", nil), http.StatusOK)
				w := e.do("GET", "/shipping_labels/"+b.Data.ShippingLabel.ID+"/label", "all", nil)
				if w.Code != http.StatusOK {
					t.Fatalf("GET label = %d %s", w.Code, w.Body)
				}
				return b.Data.ShippingLabel.TrackingCode, w.Body.Bytes()
			}
		}
		t.Fatalf("no %s rate among %+v", carrier, s.Data.ShippingRates)
		return "", nil
	}

	code, zpl := buy("ZPL", "USPSGA")
	if code != "9261292700768711948021" {
		t.Fatalf("tracking code = %s; want the range's first, 9261292700768711948021", code)
	}
	for _, want := range []string{"^FDUSPS Ground Advantage^FS", "^BCN,160,N,N,N,N^FD>;>8420787011234>89261292700768711948021^FS",
		"^FD9261 2927 0076 8711 9480 21^FS"} {
		if !bytes.Contains(zpl, []byte(want)) {
			t.Errorf("ZPL label lacks %s:\n%s", want, zpl)
		}
	}
	if bytes.Contains(zpl, []byte("USPSGA")) {
		t.Errorf("ZPL label prints the carrier's code USPSGA:\n%s", zpl)
	}

	zbar := tooltest.Require(t, "zbarimg")
	for _, tt := range []struct {
		carrier string
		gs1     bool
		data    func(code string) string
	}{
		{"USPSGA", true, func(code string) string { return "420787011234\x1d" + code }},
		{"ACMEX", false, func(code string) string { return code }},
	} {
		code, png := buy("PNG", tt.carrier)
		file := filepath.Join(t.TempDir(), "label.png")
		if err := os.WriteFile(file, png, 0o644); err != nil {
			t.Fatal(err)
		}
		typ, gs1, data := scanXML(t, zbar, file)
		if typ != "CODE-128" || gs1 != tt.gs1 || data != tt.data(code) {
			t.Errorf("zbarimg --xml read %s's label as %s, GS1 %v, %q; want CODE-128, GS1 %v, %q", tt.carrier, typ, gs1, data, tt.gs1, tt.data(code))
		}
	}
}

// scanXML reads the one barcode of an image file with zbarimg --xml: its type, whether zbar
// reports the GS1 modifier, and its data (base64 in the XML when it holds a GS).
func scanXML(t *testing.T, zbar, file string) (typ string, gs1 bool, data string) {
	t.Helper()
	out, err := exec.Command(zbar, "--xml", "-q", file).Output()
	if err != nil {
		t.Fatalf("zbarimg --xml %s: %v (no barcode found?)", filepath.Base(file), err)
	}
	var doc struct {
		Symbols []struct {
			Type      string `xml:"type,attr"`
			Modifiers string `xml:"modifiers,attr"`
			Data      struct {
				Format string `xml:"format,attr"`
				Text   string `xml:",chardata"`
			} `xml:"data"`
		} `xml:"source>index>symbol"`
	}
	if err := xml.Unmarshal(out, &doc); err != nil || len(doc.Symbols) != 1 {
		t.Fatalf("zbarimg --xml read %d symbols (%v); want 1:\n%s", len(doc.Symbols), err, out)
	}
	s := doc.Symbols[0]
	data = s.Data.Text
	if s.Data.Format == "base64" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			t.Fatalf("zbarimg --xml data %q: %v", data, err)
		}
		data = string(b)
	}
	return s.Type, strings.Contains(" "+s.Modifiers+" ", " GS1 "), data
}
