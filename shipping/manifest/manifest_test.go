package manifest

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/tooltest"
)

func shipment(status, shipDate string) *shipping.Shipment {
	return &shipping.Shipment{ID: "s1", Status: status, ShipDate: shipDate,
		Origin:      shipping.Address{Name: "Acme Warehouse", Street1: "1 Dock St", City: "Reno", State: "NV", Zip: "89501", Country: "US"},
		Destination: shipping.Address{Name: "Jo Doe", Street1: "5 Elm St", City: "Austin", State: "TX", Zip: "78701", Country: "US"},
		Parcel:      shipping.Parcel{Length: 10, Width: 20, Height: 5, LengthUnit: "CM", Weight: 1.5, WeightUnit: "LB"}}
}

func TestQualifies(t *testing.T) {
	scan := &shipping.Timestamp{Time: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	other := "m0"
	label := func(mod func(l *shipping.Label)) *shipping.Label {
		l := &shipping.Label{Carrier: "SWIFTSHIP", Status: shipping.LabelPreTransit}
		if mod != nil {
			mod(l)
		}
		return l
	}
	tests := []struct {
		name string
		s    *shipping.Shipment
		l    *shipping.Label
		want bool
	}{
		{"fresh label", shipment(shipping.StatusPurchased, "2026-11-22"), label(nil), true},
		{"another date", shipment(shipping.StatusPurchased, "2026-11-23"), label(nil), false},
		{"another carrier", shipment(shipping.StatusPurchased, "2026-11-22"), label(func(l *shipping.Label) { l.Carrier = "PARCELLO" }), false},
		{"already manifested", shipment(shipping.StatusPurchased, "2026-11-22"), label(func(l *shipping.Label) { l.ManifestID = &other }), false},
		{"in transit", shipment(shipping.StatusPurchased, "2026-11-22"), label(func(l *shipping.Label) { l.Status, l.FirstCarrierScanAt = shipping.LabelInTransit, scan }), false},
		{"PRE_TRANSIT after a scan", shipment(shipping.StatusPurchased, "2026-11-22"), label(func(l *shipping.Label) { l.FirstCarrierScanAt = scan }), false},
		{"voided", shipment(shipping.StatusCancelled, "2026-11-22"), label(func(l *shipping.Label) { l.Status = shipping.LabelVoided }), false},
		{"delivered", shipment(shipping.StatusPurchased, "2026-11-22"), label(func(l *shipping.Label) { l.Status = shipping.LabelDelivered }), false},
		{"no label", shipment(shipping.StatusOpen, "2026-11-22"), nil, false},
		{"return label", returnShipment(shipment(shipping.StatusPurchased, "2026-11-22")), label(nil), false},
	}
	for _, tt := range tests {
		if got := Qualifies(tt.s, tt.l, "SWIFTSHIP", "2026-11-22"); got != tt.want {
			t.Errorf("Qualifies(%s) = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// returnShipment marks s a return: its label enters the mail stream from the customer.
func returnShipment(s *shipping.Shipment) *shipping.Shipment {
	s.IsReturn = true
	return s
}

func TestLineFor(t *testing.T) {
	s := shipment(shipping.StatusPurchased, "2026-11-22")
	ref := "PO-7"
	s.CustomReference1 = &ref
	got := LineFor(s, &shipping.Label{TrackingCode: "SWX1", Service: "REGEA"})
	want := Line{TrackingCode: "SWX1", Service: "REGEA", ShipDate: "2026-11-22", WeightOz: 24, LengthIn: 3.94, WidthIn: 7.87,
		HeightIn: 1.97, FromZip: "89501", To: s.Destination, Reference: "PO-7"}
	if got != want {
		t.Errorf("LineFor = %+v; want %+v", got, want)
	}
}

func TestShipperFor(t *testing.T) {
	a, b := shipment(shipping.StatusPurchased, "2026-11-22"), shipment(shipping.StatusPurchased, "2026-11-22")
	got := ShipperFor("acme", "Acme", []*shipping.Shipment{a, b})
	if got.Name != "acme (Acme)" || strings.Join(got.Address, "|") != "Acme Warehouse|1 Dock St|Reno, NV 89501 US" {
		t.Errorf("ShipperFor(one origin) = %+v", got)
	}
	b.Origin.Zip = "89502"
	if got := ShipperFor("acme", "acme", []*shipping.Shipment{a, b}); got.Name != "acme" || len(got.Address) != 1 || !strings.Contains(got.Address[0], "Several") {
		t.Errorf("ShipperFor(two origins) = %+v", got)
	}
}

func sample(n int) Manifest {
	m := Manifest{ID: "0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b", Carrier: "SWIFTSHIP", ShipDate: "2026-11-22",
		Shipper: Shipper{Name: "Acme", Address: []string{"1 Dock St", "Reno, NV 89501 US"}}, CreatedAt: time.Date(2026, 11, 22, 17, 0, 0, 0, time.UTC)}
	for i := range n {
		m.Lines = append(m.Lines, Line{TrackingCode: fmt.Sprintf("SWX%010d", i), Service: "REGEA", ShipDate: "2026-11-22",
			WeightOz: 12.5, LengthIn: 10, WidthIn: 8, HeightIn: 4, FromZip: "89501",
			To:        shipping.Address{Name: "Jo, \"the\" Doe", Street1: "5 Elm St", City: "Austin", State: "TX", Zip: "78701", Country: "US"},
			Reference: "=cmd"})
	}
	return m
}

// TestCSV: a header row with the fixed columns, then exactly one row per label, in order, with
// quoting and formula-looking text neutralised.
func TestCSV(t *testing.T) {
	for _, n := range []int{1, 3, 250} {
		m := sample(n)
		rows, err := csv.NewReader(bytes.NewReader(CSV(m))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != n+1 {
			t.Fatalf("CSV of %d labels has %d rows; want %d", n, len(rows), n+1)
		}
		if got := strings.Join(rows[0], ","); got != "tracking_code,service,ship_date,weight_oz,length_in,width_in,height_in,from_zip,to_name,to_street1,to_city,to_state,to_zip,to_country,reference" {
			t.Errorf("header = %s", got)
		}
		for i, r := range rows[1:] {
			want := []string{m.Lines[i].TrackingCode, "REGEA", "2026-11-22", "12.5", "10", "8", "4", "89501", "Jo, \"the\" Doe", "5 Elm St",
				"Austin", "TX", "78701", "US", "'=cmd"}
			if strings.Join(r, "|") != strings.Join(want, "|") {
				t.Errorf("row %d = %q; want %q", i+1, r, want)
			}
		}
	}
}

// TestPDFPages: the table runs over as many pages as it needs, and the same manifest gives the
// same bytes.
func TestPDFPages(t *testing.T) {
	for _, tt := range []struct{ labels, pages int }{{1, 1}, {20, 1}, {60, 2}, {1000, 21}} {
		b := PDF(sample(tt.labels))
		if got := bytes.Count(b, []byte("/Type /Page ")); got != tt.pages {
			t.Errorf("PDF of %d labels has %d pages; want %d", tt.labels, got, tt.pages)
		}
		if !bytes.Equal(b, PDF(sample(tt.labels))) {
			t.Errorf("PDF of %d labels differs between two renders", tt.labels)
		}
	}
}

// TestPDFInAReader renders the manifest with poppler, reads its barcode with zbarimg and its
// text with pdftotext: a real document a driver signs and a scanner reads.
func TestPDFInAReader(t *testing.T) {
	pdftoppm, zbar := tooltest.Require(t, "pdftoppm"), tooltest.Require(t, "zbarimg")
	m := sample(70)
	dir := t.TempDir()
	file := filepath.Join(dir, "manifest.pdf")
	if err := os.WriteFile(file, PDF(m), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(pdftoppm, "-r", "150", "-png", "-f", "1", "-l", "1", file, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "page*.png"))
	if len(pages) != 1 {
		t.Fatalf("pdftoppm rendered %d first pages", len(pages))
	}
	out, err := exec.Command(zbar, "--quiet", "--raw", pages[0]).Output()
	if err != nil {
		t.Fatalf("zbarimg: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != m.ID {
		t.Errorf("zbarimg read %q; want the manifest id %s", got, m.ID)
	}
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil {
		return
	}
	text, err := exec.Command(pdftotext, "-layout", file, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	for _, want := range []string{"CARRIER MANIFEST", "SWIFTSHIP", "2026-11-22", "Acme", "Labels", "70", m.Lines[0].TrackingCode,
		m.Lines[69].TrackingCode, "78701", "Driver signature", "Page 2 of 2"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the PDF's text lacks %q", want)
		}
	}
}

// BenchmarkRender1000 renders both documents of a 1,000-label manifest.
func BenchmarkRender1000(b *testing.B) {
	m := sample(1000)
	for b.Loop() {
		PDF(m)
		CSV(m)
	}
}

// TestRequestValidate: a close-out names a carrier the deployment has, by its exact code (a
// typo or another case is unknown), and a date.
func TestRequestValidate(t *testing.T) {
	known := func(code string) bool { return code == "SWIFTSHIP" || code == "USPSGA" }
	tests := []struct {
		req      Request
		wantDate string
		fields   string // field:code, …
	}{
		{Request{Carrier: "SWIFTSHIP"}, "2026-11-22", ""},
		{Request{Carrier: "SWIFTSHIP", ShipDate: "2026-11-20"}, "2026-11-20", ""},
		{Request{Carrier: "USPSGA"}, "2026-11-22", ""},
		{Request{}, "2026-11-22", "carrier:required"},
		{Request{Carrier: strings.Repeat("X", 65)}, "2026-11-22", "carrier:too_long"},
		{Request{Carrier: "uspsga"}, "2026-11-22", "carrier:unknown"},
		{Request{Carrier: "USPSG"}, "2026-11-22", "carrier:unknown"},
		{Request{Carrier: "USPSGA "}, "2026-11-22", "carrier:unknown"},
		{Request{Carrier: "NO_SUCH_CARRIER", ShipDate: "tomorrow"}, "tomorrow", "carrier:unknown,ship_date:invalid"},
		{Request{Carrier: "SWIFTSHIP", ShipDate: "2026-13-01"}, "2026-13-01", "ship_date:invalid"},
		{Request{Carrier: "SWIFTSHIP", ShipDate: "tomorrow"}, "tomorrow", "ship_date:invalid"},
	}
	for _, tt := range tests {
		r := tt.req
		err := r.Validate("2026-11-22", known)
		var fields []string
		if ve, ok := err.(*shipping.ValidationError); ok {
			for _, f := range ve.Fields {
				fields = append(fields, f.Field+":"+f.Code)
			}
		}
		if got := strings.Join(fields, ","); got != tt.fields || r.ShipDate != tt.wantDate {
			t.Errorf("Validate(%+v) = fields %q, ship_date %q; want %q, %q", tt.req, got, r.ShipDate, tt.fields, tt.wantDate)
		}
	}
}
