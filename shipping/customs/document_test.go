package customs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping/pdf"
	"github.com/waybill/waybill/shipping/tooltest"
)

func ptr(s string) *string { return &s }

// sampleDocument is a validated declaration of n items from Los Angeles to Toronto, in a parcel
// 8 oz heavier than its items.
func sampleDocument(n int, itn string) Document {
	d := Declaration{CustomsSigner: "Ada Lovelace", AESITN: itn, ContentsType: "GIFT"}
	for i := range n {
		d.CustomsItems = append(d.CustomsItems, Item{
			Description:          fmt.Sprintf("Item %d: organic cotton T-shirt, navy", i+1),
			HarmonizedSystemCode: ptr(fmt.Sprintf("6109.10.%04d", 10+i)),
			OriginCountry:        []string{"US", "PT", "CN"}[i%3],
			Quantity:             int64(i%4 + 1),
			Value:                12.5 + float64(i),
			Weight:               4 + float64(i%3),
			WeightUnit:           "OZ",
		})
	}
	parcelOz := d.WeightOz() + 8
	if errs := d.Validate("US", parcelOz); errs != nil {
		panic(fmt.Sprint(errs))
	}
	return Document{
		Declaration: d,
		From:        Address{Name: "Acme Fulfilment", Company: "Acme Inc.", Street1: "1 Market St", City: "Los Angeles", State: "CA", Zip: "90012", Country: "US", Phone: "+1 213 555 0100"},
		To:          Address{Name: "Zoë Tremblay", Street1: "100 Queen St W", Street2: "Suite 7^10~", City: "Toronto", State: "ON", Zip: "M5H 2N2", Country: "CA"},
		Carrier:     "POSTLINE", Service: "International Priority", TrackingCode: S10Number("LX", 12345678, "US"),
		Date: "2026-11-23", ParcelOz: parcelOz,
	}
}

// pdfText checks doc with qpdf and returns the text pdftotext reads off it, its whitespace
// runs made single spaces.
func pdfText(t *testing.T, doc []byte) string {
	t.Helper()
	pdftotext := tooltest.Require(t, "pdftotext")
	file := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if qpdf, err := exec.LookPath("qpdf"); err == nil {
		if out, err := exec.Command(qpdf, "--check", file).CombinedOutput(); err != nil {
			t.Fatalf("qpdf --check: %v\n%s", err, out)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("qpdf is required in CI: %v", err)
	}
	out, err := exec.Command(pdftotext, "-enc", "UTF-8", file, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// wantText reports every string of want that text lacks.
func wantText(t *testing.T, what, text string, want []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s: pdftotext does not read %q in:\n%s", what, w, text)
		}
	}
}

// itemTexts is what a document must show of every item: description, HS code, origin,
// quantity, weight and value.
func itemTexts(d Document) []string {
	var want []string
	for _, it := range d.Declaration.CustomsItems {
		want = append(want, it.Description, *it.HarmonizedSystemCode, it.OriginCountry,
			fmt.Sprintf("%.2f", it.Value), fmt.Sprintf("%v %s", it.Weight, it.WeightUnit), fmt.Sprint(it.Quantity))
	}
	return want
}

func TestDeclarationPDF(t *testing.T) {
	for _, tc := range []struct {
		name  string
		doc   Document
		form  string
		pages int
		want  []string
	}{
		{"CN22", sampleDocument(3, ""), FormCN22, 1, []string{"CN 22", "NOEEI 30.37(a)", "40.50 USD"}},
		{"CN22 of ten lines", sampleDocument(10, ""), FormCN22, 1, []string{"CN 22", "NOEEI 30.37(a)"}},
		{"CN23 of thirty lines", sampleDocument(30, "AES X20260115123456"), FormCN23, 4, []string{"CN 23", "AES X20260115123456",
			"page 1 of 4", "page 4 of 4", "Acme Fulfilment", "Zoë Tremblay", "Toronto, ON M5H 2N2", "CANADA (CA)", "810.00 USD"}},
		{"CN23 of a hundred lines", sampleDocument(100, "AES X20260115123456"), FormCN23, 9, []string{"CN 23", "page 9 of 9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.doc.Form(); got != tc.form {
				t.Fatalf("Form() = %s; want %s", got, tc.form)
			}
			var doc pdf.Document
			doc.AddPage(pdf.LabelWidth, pdf.LabelHeight) // the label's page
			if err := tc.doc.AddDeclarationPages(&doc); err != nil {
				t.Fatal(err)
			}
			if got := doc.Pages() - 1; got != tc.pages {
				t.Errorf("AddDeclarationPages added %d pages; want %d", got, tc.pages)
			}
			b, err := tc.doc.DeclarationPDF()
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := tc.doc.DeclarationPDF(); !bytes.Equal(b, again) {
				t.Errorf("DeclarationPDF() differs between two calls")
			}
			text := pdfText(t, b)
			want := append([]string{"CUSTOMS DECLARATION", "LX123456785US", "LX 123 456 785 US", "POSTLINE",
				"Contents: GIFT", "If undeliverable: RETURN TO SENDER", "Total weight", "Total value", "Incoterm", "DAP (Delivered at Place)",
				"AES / ITN", "Signature: Ada Lovelace", "Date: 2026-11-23", formatOz(tc.doc.Declaration.WeightOz())}, tc.want...)
			wantText(t, tc.name, text, append(want, itemTexts(tc.doc)...))
		})
	}
}

// TestDeclarationPDFText shows the ITN, DDP, ABANDON and every contents type as chosen.
func TestDeclarationPDFChoices(t *testing.T) {
	for _, tc := range []struct{ contents, shown string }{
		{ContentsMerchandise, "MERCHANDISE"}, {ContentsGift, "GIFT"}, {ContentsDocuments, "DOCUMENTS"},
		{ContentsSample, "COMMERCIAL SAMPLE"}, {ContentsReturnedGoods, "RETURNED GOODS"},
	} {
		d := sampleDocument(2, "AES X20260115123456")
		d.Declaration.ContentsType, d.Declaration.NonDeliveryOption, d.Declaration.Incoterm = tc.contents, NonDeliveryAbandon, ptr(IncotermDDP)
		b, err := d.DeclarationPDF()
		if err != nil {
			t.Fatal(err)
		}
		text := pdfText(t, b)
		wantText(t, tc.contents, text, []string{"Contents: " + tc.shown, "If undeliverable: ABANDON", "DDP (Delivered Duty Paid)", "AES X20260115123456"})
		if strings.Contains(text, Exemption) {
			t.Errorf("%s: the declaration prints the exemption beside the ITN", tc.contents)
		}
	}
}

func TestInvoicePDF(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  Document
		want []string
	}{
		{"three lines", sampleDocument(3, ""), []string{"NOEEI 30.37(a)", "Page 1 of 1", "40.50", "Total quantity"}},
		{"a hundred lines", sampleDocument(100, "AES X20260115123456"), []string{"AES X20260115123456", "Page 1 of ", "(continued)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.doc.InvoicePDF()
			if !bytes.Equal(b, tc.doc.InvoicePDF()) {
				t.Errorf("InvoicePDF() differs between two calls")
			}
			if !bytes.Contains(b, []byte("/MediaBox [0 0 612 792]")) {
				t.Errorf("the invoice is not on US Letter pages")
			}
			text := pdfText(t, b)
			want := append([]string{"COMMERCIAL INVOICE", "Tracking number: LX123456785US", "Date: 2026-11-23",
				"SHIPPER / EXPORTER", "Acme Fulfilment", "1 Market St", "Los Angeles, CA 90012",
				"CONSIGNEE", "Zoë Tremblay", "100 Queen St W", "Toronto, ON M5H 2N2", "CANADA (CA)",
				"POSTLINE", "International Priority", "Reason for export", "GIFT", "Incoterm", "DAP (Delivered at Place)",
				"Currency", "USD", "Country of export", "United States of America (US)", "Canada (CA)",
				"Signature: Ada Lovelace", "exported from the United States in accordance with the Export Administration Regulations",
				"Total value (USD)", "Total net weight", formatOz(tc.doc.Declaration.WeightOz()), "Gross weight", formatOz(tc.doc.ParcelOz)}, tc.want...)
			wantText(t, tc.name, text, append(want, itemTexts(tc.doc)...))
		})
	}
	// An export from elsewhere carries no US destination control statement, nor the US
	// exemption from filing.
	d := sampleDocument(1, "")
	d.From.Country = "GB"
	if text := pdfText(t, d.InvoicePDF()); strings.Contains(text, "Export Administration Regulations") ||
		strings.Contains(text, Exemption) || !strings.Contains(text, "Not a US export") {
		t.Errorf("an invoice from GB prints the US destination control statement or exemption:\n%s", text)
	}
	b, err := d.DeclarationPDF()
	if err != nil {
		t.Fatal(err)
	}
	if text := pdfText(t, b); strings.Contains(text, Exemption) || !strings.Contains(text, "Not a US export") {
		t.Errorf("a declaration from GB prints the US exemption:\n%s", text)
	}
}

func TestDeclarationZPL(t *testing.T) {
	for _, tc := range []struct {
		name  string
		doc   Document
		pages int
		want  []string
	}{
		{"CN22", sampleDocument(3, ""), 1, []string{"^FDCN 22^FS", "^FDNOEEI 30.37(a)^FS"}},
		{"CN23", sampleDocument(30, "AES X20260115123456"), 4, []string{"^FDCN 23^FS", "^FDAES X20260115123456^FS",
			"^FDSuite 7-10-^FS", "^FDZoë Tremblay^FS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.doc.DeclarationZPL()
			if err != nil {
				t.Fatal(err)
			}
			z := string(b)
			if n, m := strings.Count(z, "^XA"), strings.Count(z, "^XZ"); n != tc.pages || m != tc.pages {
				t.Errorf("DeclarationZPL() has %d ^XA and %d ^XZ; want %d labels", n, m, tc.pages)
			}
			if !strings.HasPrefix(z, "^XA\n^CI28\n^PW812\n^LL1218\n") || !strings.HasSuffix(z, "^XZ\n") {
				t.Errorf("DeclarationZPL() does not set up a 4 × 6 in UTF-8 label:\n%.80s", z)
			}
			want := append([]string{"^BCN,100,N,N,N,A^FDLX123456785US^FS", "^FDLX 123 456 785 US^FS", "^FDDAP (Delivered at Place)^FS",
				"^FDSignature: Ada Lovelace^FS", "^FDDate: 2026-11-23^FS"}, tc.want...)
			for _, it := range tc.doc.Declaration.CustomsItems {
				want = append(want, it.Description+"^FS", "^FD"+*it.HarmonizedSystemCode+"^FS", fmt.Sprintf("^FD%.2f^FS", it.Value))
			}
			for _, w := range want {
				if !strings.Contains(z, w) {
					t.Errorf("DeclarationZPL() lacks %q", w)
				}
			}
			// Every field's data stays free of ZPL's command characters.
			for _, f := range regexp.MustCompile(`\^FD(.*?)\^FS`).FindAllStringSubmatch(z, -1) {
				if strings.ContainsAny(f[1], "^~") {
					t.Errorf("field data %q holds a ZPL command character", f[1])
				}
			}
		})
	}
}

func TestDeclarationRejectsUnprintableTrackingCode(t *testing.T) {
	d := sampleDocument(1, "")
	d.TrackingCode = "LX12345678€US"
	if _, err := d.DeclarationPDF(); err == nil {
		t.Errorf("DeclarationPDF() of a tracking code Code 128 cannot encode succeeded; want an error")
	}
	if _, err := d.DeclarationZPL(); err == nil {
		t.Errorf("DeclarationZPL() of a tracking code Code 128 cannot encode succeeded; want an error")
	}
}
