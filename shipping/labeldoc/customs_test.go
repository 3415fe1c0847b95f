package labeldoc

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/customs"
	"github.com/waybill/waybill/shipping/tooltest"
)

// boughtAbroad is a shipment from Los Angeles to Toronto of n items worth value USD each, in a parcel
// of parcelOz, bought on POSTLINE with an S10 number.
func boughtAbroad(n int, value, parcelOz float64, itn string) (*shipping.Shipment, *shipping.Label) {
	la := shipping.Address{Name: "Acme Warehouse", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"}
	toronto := shipping.Address{Name: "Zoë Tremblay", Street1: "100 Queen St W", City: "Toronto", State: "ON", Zip: "M5H 2N2", Country: "CA"}
	info := shipping.CustomsInfo{CustomsSigner: "Ada Lovelace", AESITN: itn}
	for i := range n {
		hs := fmt.Sprintf("6109.10.%04d", 10+i)
		info.CustomsItems = append(info.CustomsItems, shipping.CustomsItem{Description: fmt.Sprintf("Cotton T-shirt %d", i+1),
			HarmonizedSystemCode: &hs, OriginCountry: "PT", Quantity: 1, Value: value, Weight: 2, WeightUnit: "OZ"})
	}
	s := &shipping.Shipment{ID: "s1", Origin: la, Destination: toronto, ReturnAddress: la, ShipDate: "2026-11-23",
		Parcel: shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN", Weight: parcelOz, WeightUnit: "OZ"}, CustomsInfo: &info}
	l := &shipping.Label{ID: "l1", ShipmentID: "s1", Status: shipping.LabelPreTransit, Carrier: "POSTLINE", Service: "INTERNATIONAL_PARCEL",
		TrackingCode: customs.S10Number("LX", 12345678, "US")}
	return s, l
}

// TestLabelWithDeclaration: an international label's PDF is the label and then its CN22 (one
// page) or CN23 (a page per so many items), its ZPL the label's program and then one per
// declaration page, its PNG the label alone; a domestic label has no declaration.
func TestLabelWithDeclaration(t *testing.T) {
	for _, tt := range []struct {
		name      string
		n         int
		value, oz float64
		itn       string
		form      string
		minPages  int // declaration pages, at least
	}{
		{"CN22 under $400 and 4 lb", 3, 20, 30, "", "CN 22", 1},
		{"CN23 at $3,000 with an ITN", 3, 1000, 30, "AES X20261123123456", "CN 23", 1},
		{"CN23 of many items", 40, 5, 120, "", "CN 23", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, l := boughtAbroad(tt.n, tt.value, tt.oz, tt.itn)
			d := For(s, l, nil)
			if d.Declaration == nil {
				t.Fatal("For(abroad).Declaration = nil; want the customs declaration")
			}
			b, err := d.PDF()
			if err != nil {
				t.Fatal(err)
			}
			pages := tooltest.PDFPages(t, b)
			if len(pages) < 1+tt.minPages {
				t.Fatalf("PDF has %d pages; want the label and at least %d declaration pages", len(pages), tt.minPages)
			}
			if strings.Contains(pages[0], "CUSTOMS DECLARATION "+tt.form) || !strings.Contains(pages[0], "LX 123 456 785 US") {
				t.Errorf("page 1 = %q; want the label", pages[0])
			}
			for i, p := range pages[1:] {
				if !strings.Contains(p, tt.form) || !strings.Contains(p, "LX 123 456 785 US") {
					t.Errorf("page %d = %q; want the %s with the tracking number", i+2, p, tt.form)
				}
			}
			want := customs.Exemption
			if tt.itn != "" {
				want = tt.itn
			}
			if last := pages[len(pages)-1]; !strings.Contains(last, want) || !strings.Contains(last, "Ada Lovelace") {
				t.Errorf("last page = %q; want %q and the signer", last, want)
			}

			z, err := d.ZPL()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := bytes.Count(z, []byte("^XA")), len(pages); got != want {
				t.Errorf("ZPL has %d label programs; want %d (the label and its declaration)", got, want)
			}
			if !bytes.HasPrefix(z, mustZPL(t, withoutDeclaration(d))) {
				t.Error("ZPL does not start with the label's own program")
			}

			png, err := d.PNG()
			if err != nil {
				t.Fatal(err)
			}
			alone, _ := withoutDeclaration(d).PNG()
			if !bytes.Equal(png, alone) {
				t.Error("PNG differs from the label alone; want the label only")
			}
		})
	}

	t.Run("domestic", func(t *testing.T) {
		s, l := boughtAbroad(1, 20, 30, "")
		s.Destination = shipping.Address{Name: "Jane Doe", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"}
		if d := For(s, l, nil); d.Declaration != nil {
			t.Errorf("For(domestic).Declaration = %+v; want nil", d.Declaration)
		}
		if _, ok := CustomsFor(s, l, nil); ok {
			t.Error("CustomsFor(domestic) ok = true; want false")
		}
	})
}

// TestLabelsWithDeclarations: a batch's PDF and ZPL hold each international label's declaration
// right after it.
func TestLabelsWithDeclarations(t *testing.T) {
	s, l := boughtAbroad(2, 20, 30, "")
	intl := For(s, l, nil)
	docs := []Document{sampleLabel("PL80007652062298081"), intl, sampleLabel("PL55958836184690561")}
	b, err := LabelsPDF(docs)
	if err != nil {
		t.Fatal(err)
	}
	pages := tooltest.PDFPages(t, b)
	if len(pages) != 4 {
		t.Fatalf("batch PDF has %d pages; want 4 (label, label, its CN22, label)", len(pages))
	}
	for i, want := range []string{"PL80 0076", "LX 123 456 785 US", "CN 22", "PL55 9588"} {
		if !strings.Contains(pages[i], want) {
			t.Errorf("batch page %d = %q; want %q", i+1, pages[i], want)
		}
	}
	z, err := LabelsZPL(docs)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(z, []byte("^XA")); got != 4 {
		t.Errorf("batch ZPL has %d label programs; want 4", got)
	}
}

func withoutDeclaration(d Document) Document {
	d.Declaration = nil
	return d
}

func mustZPL(t *testing.T, d Document) []byte {
	t.Helper()
	z, err := d.ZPL()
	if err != nil {
		t.Fatal(err)
	}
	return z
}
