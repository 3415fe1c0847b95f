package labeldoc

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"flag"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/barcode"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/shipping/tooltest"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

func sampleLabel(code string) Document {
	return Document{
		From:           shipping.Address{Name: "Acme Fulfilment", Company: "Acme Inc.", Street1: "1 Market St", City: "San Francisco", State: "CA", Zip: "94105", Country: "US"},
		To:             shipping.Address{Name: "Zoë Müller (Receiving)", Street1: "350 5th Ave", Street2: "Suite 7^10~", City: "New York", State: "NY", Zip: "10118", Country: "US"},
		Carrier:        "SWIFTSHIP",
		Service:        "Regional Economy Air",
		ShipDate:       "2026-11-23",
		TrackingCode:   code,
		BillableWeight: "2 LB 8 OZ",
		Weight:         "2.5 LB",
		Dimensions:     "10 x 8 x 4 IN",
		Reference:      "order #1001",
	}
}

// TestLabelPDFRendersAndScans renders label PDFs with poppler at 300 dpi and reads the barcode
// back off a row of the rendered image: the drawing is a real, scannable Code 128 of the
// tracking code, for short, long, numeric and mixed codes.
func TestLabelPDFRendersAndScans(t *testing.T) {
	tool := tooltest.Require(t, "pdftoppm")
	for _, code := range []string{
		"SWX12345678901234567",
		"1Z999AA10123456784",
		"9400111899223344556677889",
		"WB" + strings.Repeat("0123456789", 3),
		"ABC",
	} {
		t.Run(code, func(t *testing.T) {
			doc, err := sampleLabel(code).PDF()
			if err != nil {
				t.Fatal(err)
			}
			img, _ := renderPDF(t, tool, doc, 300)
			if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 1800 {
				t.Fatalf("rendered page is %v; want 1200x1800 (4 × 6 in at 300 dpi)", b.Size())
			}
			if n := dark(img); n < 20000 {
				t.Errorf("rendered label has %d dark pixels; want a drawn label", n)
			}
			row := int(math.Round(BarcodeRow * 300.0 / labelDPI))
			// Scan between the frame's side lines.
			inner := float64(labelMargin+frameWidth+2) * 300 / labelDPI
			widths := scanRow(img, row, inner, 1200-inner)
			if want, err := barcode.Modules(code); err != nil || !slices.Equal(widths, want) {
				t.Errorf("bars read off the rendered label = %v; want %v, %v (%q)", widths, want, err, code)
			}
		})
	}
}

// renderPDF renders the first page of a PDF with pdftoppm and returns it with the PNG file's path.
func renderPDF(t *testing.T, tool string, doc []byte, dpi int) (image.Image, string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "label.pdf")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "-r", strconv.Itoa(dpi), "-gray", "-png", "-singlefile", file, filepath.Join(dir, "label")).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "label.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img, f.Name()
}

func isDark(img image.Image, x, y int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	return r+g+b < 3*0x8000
}

func dark(img image.Image) int {
	n := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if isDark(img, x, y) {
				n++
			}
		}
	}
	return n
}

// scanRow measures the bars and spaces crossing row y between x0 and x1 and converts them to
// module widths: the whole symbol is 11 modules per symbol plus 2 for the stop's final bar,
// which fixes the module size.
func scanRow(img image.Image, y int, from, to float64) []int {
	x0, x1 := int(from), int(to)
	var runs []int
	prev, n := false, 0
	for x := x0; x < x1; x++ {
		d := isDark(img, x, y)
		if len(runs) == 0 && n == 0 && !d {
			continue // leading quiet zone
		}
		if d != prev && n > 0 {
			runs = append(runs, n)
			n = 0
		}
		prev = d
		n++
	}
	if prev && n > 0 {
		runs = append(runs, n)
	}
	if len(runs) < 7 || len(runs)%6 != 1 {
		return runs
	}
	total := 0
	for _, r := range runs {
		total += r
	}
	modules := 11*((len(runs)-7)/6) + 13
	px := float64(total) / float64(modules)
	widths := make([]int, len(runs))
	for i, r := range runs {
		widths[i] = int(math.Round(float64(r) / px))
	}
	return widths
}

func TestLabelPDFDeterministic(t *testing.T) {
	a, err := sampleLabel("SWX12345678901234567").PDF()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := sampleLabel("SWX12345678901234567").PDF()
	if !bytes.Equal(a, b) {
		t.Error("two renderings of the same label differ")
	}
	for _, want := range []string{"(SWIFTSHIP)", "(Regional Economy Air)", "(SHIP DATE 2026-11-23)", "(SWX1 2345 6789 0123 4567)",
		"(Zo\\353 M\\374ller \\(Receiving\\))", "(New York, NY 10118)", "(San Francisco, CA 94105)", "(BILLABLE WT 2 LB 8 OZ)",
		"(DIMS 10 x 8 x 4 IN)", "(ACTUAL WT 2.5 LB)", "(REF order #1001)", "(FROM)", "(SHIP TO:)"} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("label PDF lacks %s", want)
		}
	}
	for _, unwanted := range []string{"(VOID)", "(CUSTOMS)"} {
		if bytes.Contains(a, []byte(unwanted)) {
			t.Errorf("label PDF of a valid domestic label shows %s", unwanted)
		}
	}
}

func TestLabelZPL(t *testing.T) {
	z, err := sampleLabel("SWX12345678901234567").ZPL()
	if err != nil {
		t.Fatal(err)
	}
	s := string(z)
	if !strings.HasPrefix(s, "^XA\n") || !strings.HasSuffix(s, "^XZ\n") {
		t.Errorf("ZPL is not framed by ^XA … ^XZ:\n%s", s)
	}
	for _, want := range []string{"^BCN,160,N,N,N,A^FDSWX12345678901234567^FS", "^FDSHIP TO:^FS", "^FDNew York, NY 10118^FS",
		"^FDSuite 7-10-^FS", "^FDZoë Müller (Receiving)^FS", "^CI28", "^PW812", "^LL1218", "^FR^FDRegional Economy Air^FS",
		"^FDBILLABLE WT 2 LB 8 OZ^FS", "^FDDIMS 10 x 8 x 4 IN^FS", "^FDREF order #1001^FS"} {
		if !strings.Contains(s, want) {
			t.Errorf("ZPL lacks %q:\n%s", want, s)
		}
	}
	// Field data must never open a command: one ^FD per ^FS, less the graphic boxes' ^FS.
	if strings.Count(s, "^FD") != strings.Count(s, "^FS")-strings.Count(s, "^GB")-strings.Count(s, "^GD") {
		t.Errorf("ZPL fields are unbalanced:\n%s", s)
	}
	z2, _ := sampleLabel("SWX12345678901234567").ZPL()
	if !bytes.Equal(z, z2) {
		t.Error("two renderings of the same ZPL differ")
	}
}

func TestLabelRender(t *testing.T) {
	tests := []struct{ format, ct, prefix, ext string }{
		{shipping.LabelFormatPDF, ContentTypePDF, "%PDF-1.4", ".pdf"},
		{shipping.LabelFormatZPL, ContentTypeZPL, "^XA", ".zpl"},
		{shipping.LabelFormatPNG, ContentTypePNG, "\x89PNG\r\n\x1a\n", ".png"},
		{"", ContentTypePDF, "%PDF-1.4", ".pdf"},
	}
	for _, tt := range tests {
		b, ct, err := sampleLabel("ABC123").Render(tt.format)
		if err != nil || ct != tt.ct || !bytes.HasPrefix(b, []byte(tt.prefix)) {
			t.Errorf("Render(%q) = %q…, %q, %v; want %q…, %q", tt.format, b[:min(8, len(b))], ct, err, tt.prefix, tt.ct)
		}
		if ext := FileExtension(tt.format); ext != tt.ext {
			t.Errorf("FileExtension(%q) = %q; want %q", tt.format, ext, tt.ext)
		}
	}
	for _, format := range []string{shipping.LabelFormatPDF, shipping.LabelFormatZPL, shipping.LabelFormatPNG} {
		if _, _, err := sampleLabel("código").Render(format); err == nil {
			t.Errorf("Render(%q) of a tracking code that is not ASCII succeeded; want an error", format)
		}
	}
}

// TestLabelPNG checks the PNG is a 4 × 6 in label at 203 dpi, dot for dot, and that its barcode
// reads back off the middle row with crisp bars: every bar and space a whole number of modules.
func TestLabelPNG(t *testing.T) {
	for _, code := range []string{"SWX12345678901234567", "1Z999AA10123456784", "WB" + strings.Repeat("0123456789", 3), "ABC"} {
		t.Run(code, func(t *testing.T) {
			b, err := sampleLabel(code).PNG()
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(b))
			if err != nil || cfg.Width != 812 || cfg.Height != 1218 {
				t.Fatalf("PNG is %dx%d, %v; want 812x1218", cfg.Width, cfg.Height, err)
			}
			// pHYs: 7992 pixels per metre both ways is 203 dpi.
			phys := []byte{0, 0, 0, 9, 'p', 'H', 'Y', 's', 0, 0, 0x1f, 0x38, 0, 0, 0x1f, 0x38, 1}
			if !bytes.Contains(b, phys) {
				t.Error("PNG does not state 203 dpi in a pHYs chunk")
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if n := dark(img); n < 20000 {
				t.Errorf("PNG label has %d dark pixels; want a drawn label", n)
			}
			inner := float64(labelMargin + frameWidth + 2)
			runs := scanRow(img, BarcodeRow, inner, labelWidth-inner)
			if want, err := barcode.Modules(code); err != nil || !slices.Equal(runs, want) {
				t.Errorf("bars read off the PNG = %v; want %v, %v (%q)", runs, want, err, code)
			}
			raw := rawRuns(img, BarcodeRow, int(inner), labelWidth-int(inner))
			module := raw[0] / runs[0]
			for i, r := range raw {
				if r != runs[i]*module {
					t.Fatalf("bar %d is %d px; want %d modules of %d px (crisp bars)", i, r, runs[i], module)
				}
			}
		})
	}
}

// rawRuns is the pixel widths of the dark and light runs crossing row y, from the first dark
// pixel after x0 to the last before x1.
func rawRuns(img image.Image, y, x0, x1 int) []int {
	for x0 < x1 && !isDark(img, x0, y) {
		x0++
	}
	for x1 > x0 && !isDark(img, x1-1, y) {
		x1--
	}
	var runs []int
	for x := x0; x < x1; {
		n := 0
		for d := isDark(img, x, y); x < x1 && isDark(img, x, y) == d; x++ {
			n++
		}
		runs = append(runs, n)
	}
	return runs
}

// TestLabelPrintsGroupedCode: the label prints a tracking number grouped as its carrier prints
// it, while its barcode encodes the number itself.
func TestLabelPrintsGroupedCode(t *testing.T) {
	for code, printed := range map[string]string{"1Z999AA10123456784": "1Z 999 AA1 01 2345 678 4",
		"9261292700768711948021": "9261 2927 0076 8711 9480 21", "PL00000000000000018": "PL00 0000 0000 0000 018"} {
		b, err := sampleLabel(code).ZPL()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), printed) || !strings.Contains(string(b), code) {
			t.Errorf("ZPL label of %s lacks the printed %q or the code itself", code, printed)
		}
	}
}

// TestLabelScansWithZbar reads the tracking code off the PNG label, and off the PDF label
// rendered by pdftoppm, with zbarimg: the barcode a scanner sees, not just the one our own
// decoder reads.
func TestLabelScansWithZbar(t *testing.T) {
	zbar := tooltest.Require(t, "zbarimg")
	pdftoppm := tooltest.Require(t, "pdftoppm")
	for _, code := range []string{"SWX12345678901234567", "PL80007652062298081", "PL00000000000000018", "1Z999AA10123456784",
		"9261292700768711948021", "WB" + strings.Repeat("0123456789", 3)} {
		d := sampleLabel(code)
		t.Run("PNG/"+code, func(t *testing.T) {
			b, err := d.PNG()
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "label.png")
			if err := os.WriteFile(file, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := scanWithZbar(t, zbar, file); got != "CODE-128:"+code {
				t.Errorf("zbarimg read %q off the PNG label; want CODE-128:%s", got, code)
			}
		})
		for _, dpi := range []int{203, 300} {
			t.Run("PDF/"+strconv.Itoa(dpi)+"/"+code, func(t *testing.T) {
				b, err := d.PDF()
				if err != nil {
					t.Fatal(err)
				}
				_, file := renderPDF(t, pdftoppm, b, dpi)
				if got := scanWithZbar(t, zbar, file); got != "CODE-128:"+code {
					t.Errorf("zbarimg read %q off the PDF label rendered at %d dpi; want CODE-128:%s", got, dpi, code)
				}
			})
		}
	}
}

// scanWithZbar returns what zbarimg reads off an image file, one "TYPE:data" per symbol.
func scanWithZbar(t *testing.T, zbar, file string) string {
	t.Helper()
	out, err := exec.Command(zbar, "-q", file).Output()
	if err != nil {
		t.Errorf("zbarimg %s: %v (no barcode found?)", filepath.Base(file), err)
	}
	return strings.TrimSpace(string(out))
}

// TestLabelVoidAndCustoms checks every format marks a voided label VOID across its face and a
// shipment with customs information with the customs declaration marker, and only those.
func TestLabelVoidAndCustoms(t *testing.T) {
	for _, tt := range []struct{ void, customs bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		d := sampleLabel("SWX12345678901234567")
		d.Void, d.Customs = tt.void, tt.customs
		p, err := d.PDF()
		if err != nil {
			t.Fatal(err)
		}
		z, err := d.ZPL()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			format   string
			doc      []byte
			void     string
			customs  string
			diagonal string
		}{
			{"PDF", p, "(VOID)", "(CUSTOMS) Tj", " l S"},
			{"ZPL", z, "^FDVOID^FS", "^FDCUSTOMS^FS", "^GD"},
		} {
			if got := bytes.Contains(c.doc, []byte(c.void)) && bytes.Contains(c.doc, []byte(c.diagonal)); got != tt.void {
				t.Errorf("Void=%v: %s shows VOID across its face = %v", tt.void, c.format, got)
			}
			if got := bytes.Contains(c.doc, []byte(c.customs)) && bytes.Contains(c.doc, []byte("DECLARATION")); got != tt.customs {
				t.Errorf("Customs=%v: %s shows the customs declaration marker = %v", tt.customs, c.format, got)
			}
		}
		b, err := d.PNG()
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		// Where the diagonals cross parts of the label left empty: the FROM block's right side
		// and the footer's right side (the customs box is drawn inside, clear of the diagonal).
		diagonalX := func(y int) int {
			return labelMargin + (y-labelMargin)*(labelWidth-2*labelMargin)/(labelHeight-2*labelMargin)
		}
		if got := isDark(img, labelWidth-diagonalX(380), 380) && isDark(img, diagonalX(1120), 1120); got != tt.void {
			t.Errorf("Void=%v: PNG diagonals drawn = %v", tt.void, got)
		}
		if got := isDark(img, labelWidth-labelMargin-labelPad-2, 1140); got != tt.customs {
			t.Errorf("Customs=%v: PNG customs box drawn = %v", tt.customs, got)
		}
	}
}

// TestFor checks what a shipment's label shows: the service's name, billable
// weight, dimensions, the reference and the return address, and no internal identifier.
func TestFor(t *testing.T) {
	ref := "PO-77"
	s := &shipping.Shipment{ID: "00000000-0000-7000-8000-00000000000a", ShipDate: "2026-11-23",
		Origin:           shipping.Address{Name: "Warehouse 9", Street1: "9 Dock Rd", City: "Reno", State: "NV", Zip: "89501", Country: "US"},
		ReturnAddress:    shipping.Address{Name: "Returns Dept", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"},
		Destination:      shipping.Address{Name: "Jane Doe", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"},
		Parcel:           shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN", Weight: 20, WeightUnit: "OZ"},
		CustomReference1: &ref}
	l := &shipping.Label{ID: "00000000-0000-7000-8000-00000000000c", ShipmentID: s.ID, Status: shipping.LabelPreTransit, Carrier: "POSTLINE",
		Service: "GROUND_ADVANTAGE", TrackingCode: "PL80007652062298081", ShippingRateID: "00000000-0000-7000-8000-00000000000b"}
	d := For(s, l, postline(t))
	want := Document{From: s.ReturnAddress, To: s.Destination, Carrier: "Postline", Service: "Ground Advantage",
		ShipDate: "2026-11-23", TrackingCode: "PL80007652062298081", Scheme: carrier.SchemeLuhn, BillableWeight: "1 LB 15 OZ", Weight: "20 OZ",
		Dimensions: "10 x 8 x 4 IN", Reference: "PO-77"}
	if d != want {
		t.Errorf("For = %+v\nwant %+v", d, want)
	}
	l.Status = shipping.LabelVoided
	if !For(s, l, postline(t)).Void {
		t.Error("For a VOIDED label: Void = false; want true")
	}
	for _, format := range []string{shipping.LabelFormatPDF, shipping.LabelFormatZPL} {
		b, _, err := d.Render(format)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{s.ID, l.ID, l.ShippingRateID, "00000000-0000"} {
			if bytes.Contains(b, []byte(id)) {
				t.Errorf("%s label prints the internal id %s", format, id)
			}
		}
		for _, text := range []string{"Ground Advantage", "1 LB 15 OZ", "10 x 8 x 4 IN", "PO-77", "Returns Dept"} {
			if !bytes.Contains(b, []byte(text)) {
				t.Errorf("%s label lacks %q", format, text)
			}
		}
		if bytes.Contains(b, []byte("GROUND_ADVANTAGE")) || bytes.Contains(b, []byte("Warehouse 9")) {
			t.Errorf("%s label shows the service code or the origin instead of the return address", format)
		}
	}
}

// postline is the sample carrier POSTLINE.
func postline(t *testing.T) shipping.Carrier {
	t.Helper()
	for _, c := range carrier.SampleCarriers() {
		if c.Name() == "POSTLINE" {
			return c
		}
	}
	t.Fatal("no sample carrier POSTLINE")
	return nil
}

// impbCarrier is a carrier whose card issues USPS IMpb numbers: 9261292700768711948021 is its
// GROUND number of serial 1194802.
func impbCarrier() *carrier.Table {
	card := carrier.SampleCards()[0]
	card.Code, card.Name = "USPSGA", "USPS Ground Advantage"
	card.Services = []carrier.CardService{card.Services[0]}
	card.Services[0].Code = "GROUND"
	card.Tracking = carrier.TrackingScheme{Scheme: carrier.SchemeUSPSIMpb, MailerID: "927007687", ServiceTypeCodes: map[string]string{"GROUND": "612"},
		RangeStart: 1, RangeEnd: 9999999}
	return carrier.NewTable(card.Code, []*carrier.Version{{Version: 1, Card: &card}})
}

// TestLabelPrintedAsTheCarrierPrintsIt: a label shows the carrier's display name and its
// service's name from the carrier's card, and knows the tracking number's scheme; a carrier
// without a card (a host's Go carrier, or none known) is shown by its code.
func TestLabelPrintedAsTheCarrierPrintsIt(t *testing.T) {
	s := &shipping.Shipment{ShipDate: "2026-11-23", Destination: shipping.Address{Name: "Jane Doe", Zip: "78701", Country: "US"}}
	tests := []struct {
		name                     string
		c                        shipping.Carrier
		label                    shipping.Label
		carrier, service, scheme string
	}{
		{"sample card", postline(t), shipping.Label{Carrier: "POSTLINE", Service: "PRIORITY", TrackingCode: "PL80007652062298081"},
			"Postline", "Priority", carrier.SchemeLuhn},
		{"IMpb card", impbCarrier(), shipping.Label{Carrier: "USPSGA", Service: "GROUND", TrackingCode: "9261292700768711948021"},
			"USPS Ground Advantage", "Ground Advantage", carrier.SchemeUSPSIMpb},
		{"a number no version issues", impbCarrier(), shipping.Label{Carrier: "USPSGA", Service: "GROUND", TrackingCode: "9261292700768711948022"},
			"USPS Ground Advantage", "Ground Advantage", ""},
		{"carrier not known", nil, shipping.Label{Carrier: "ACME", Service: "SAME_DAY", TrackingCode: "AC123"}, "ACME", "Same Day", ""},
		{"carrier without a card", hostCarrier{}, shipping.Label{Carrier: "ACME", Service: "SAME_DAY", TrackingCode: "AC123"}, "ACME", "Same Day", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := For(s, &tt.label, tt.c)
			if d.Carrier != tt.carrier || d.Service != tt.service || d.Scheme != tt.scheme {
				t.Errorf("For(%s) shows %q, %q, scheme %q; want %q, %q, %q", tt.name, d.Carrier, d.Service, d.Scheme,
					tt.carrier, tt.service, tt.scheme)
			}
			z, err := d.ZPL()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(z, []byte("^FD"+tt.carrier+"^FS")) || !bytes.Contains(z, []byte("^FD"+tt.carrier+" TRACKING #^FS")) {
				t.Errorf("ZPL label of %s does not print %q in its header and above its barcode", tt.name, tt.carrier)
			}
		})
	}
}

// hostCarrier is a host's Go carrier: no card, no Printer.
type hostCarrier struct{ shipping.Carrier }

// TestLabelBarcode: a usps_impb number is barcoded GS1-128 with its routing code (USPS
// Publication 199: FNC1, 420 + ZIP5 or ZIP+4, FNC1, the number); every other number as itself.
func TestLabelBarcode(t *testing.T) {
	const impb = "9261292700768711948021"
	us := func(zip string) shipping.Address { return shipping.Address{Zip: zip, Country: "US"} }
	tests := []struct {
		name, scheme, code string
		to                 shipping.Address
		want               string
	}{
		{"IMpb, ZIP5", carrier.SchemeUSPSIMpb, impb, us("78701"), barcode.FNC1 + "42078701" + barcode.FNC1 + impb},
		{"IMpb, ZIP+4", carrier.SchemeUSPSIMpb, impb, us("78701-1234"), barcode.FNC1 + "420787011234" + barcode.FNC1 + impb},
		{"IMpb, ZIP with leading zero", carrier.SchemeUSPSIMpb, impb, us("02134"), barcode.FNC1 + "42002134" + barcode.FNC1 + impb},
		{"IMpb abroad: no routing code", carrier.SchemeUSPSIMpb, impb, shipping.Address{Zip: "75001", Country: "FR"}, barcode.FNC1 + impb},
		{"IMpb without a ZIP", carrier.SchemeUSPSIMpb, impb, us(""), barcode.FNC1 + impb},
		{"UPS 1Z", carrier.SchemeUPS1Z, "1Z999AA10123456784", us("78701"), "1Z999AA10123456784"},
		{"luhn", carrier.SchemeLuhn, "PL80007652062298081", us("78701"), "PL80007652062298081"},
		{"scheme not known", "", impb, us("78701"), impb},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LabelBarcode(tt.scheme, tt.code, tt.to); got != tt.want {
				t.Errorf("LabelBarcode(%q, %q, %q) = %q; want %q", tt.scheme, tt.code, tt.to.Zip, got, tt.want)
			}
		})
	}
}

// impbLabel is the sample label of an IMpb number to ZIP (the destination's).
func impbLabel(zip string) Document {
	d := sampleLabel("9261292700768711948021")
	d.Carrier, d.Scheme, d.To.Zip, d.To.City, d.To.State = "USPS", carrier.SchemeUSPSIMpb, zip, "Austin", "TX"
	return d
}

// TestIMpbLabelZPL: the ZPL of an IMpb label has the printer draw GS1-128 as ZPL II writes it
// (no selected mode, >; code set C, >8 FNC1), and prints the number in groups of four.
func TestIMpbLabelZPL(t *testing.T) {
	for zip, want := range map[string]string{
		"78701":      "^BCN,160,N,N,N,N^FD>;>842078701>89261292700768711948021^FS",
		"78701-1234": "^BCN,160,N,N,N,N^FD>;>8420787011234>89261292700768711948021^FS",
	} {
		z, err := impbLabel(zip).ZPL()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(z, []byte(want)) || !bytes.Contains(z, []byte("^FD9261 2927 0076 8711 9480 21^FS")) {
			t.Errorf("ZPL of an IMpb label to %s lacks %s or the grouped number:\n%s", zip, want, z)
		}
	}
}

// TestIMpbLabelScansAsGS1 reads the barcode of IMpb labels (PNG, and PDF rendered by pdftoppm)
// with zbarimg --xml, a scanner other than our own decoder: GS1-128 (the GS1 modifier), the
// routing code, GS, the tracking number. A plain label's reads without the modifier.
func TestIMpbLabelScansAsGS1(t *testing.T) {
	zbar := tooltest.Require(t, "zbarimg")
	pdftoppm := tooltest.Require(t, "pdftoppm")
	const impb = "9261292700768711948021"
	tests := []struct {
		name string
		d    Document
		gs1  bool
		data string
	}{
		{"ZIP5", impbLabel("78701"), true, "42078701\x1d" + impb},
		{"ZIP+4", impbLabel("78701-1234"), true, "420787011234\x1d" + impb},
		{"UPS 1Z", sampleLabel("1Z999AA10123456784"), false, "1Z999AA10123456784"},
	}
	for _, tt := range tests {
		png, err := tt.d.PNG()
		if err != nil {
			t.Fatal(err)
		}
		pdf, err := tt.d.PDF()
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"PNG": filepath.Join(t.TempDir(), "label.png")}
		if err := os.WriteFile(files["PNG"], png, 0o644); err != nil {
			t.Fatal(err)
		}
		_, files["PDF"] = renderPDF(t, pdftoppm, pdf, 300)
		for format, file := range files {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				got := scanXML(t, zbar, file)
				if len(got) != 1 {
					t.Fatalf("zbarimg --xml read %d symbols; want 1: %+v", len(got), got)
				}
				s := got[0]
				if s.Type != "CODE-128" || s.GS1() != tt.gs1 || s.Data != tt.data {
					t.Errorf("zbarimg --xml read %s, GS1 %v, %q; want CODE-128, GS1 %v, %q", s.Type, s.GS1(), s.Data, tt.gs1, tt.data)
				}
			})
		}
	}
}

// zbarSymbol is one symbol of zbarimg --xml: its data is base64 when it holds a control
// character (a GS).
type zbarSymbol struct {
	Type      string `xml:"type,attr"`
	Modifiers string `xml:"modifiers,attr"`
	Data      string
	RawData   struct {
		Format string `xml:"format,attr"`
		Text   string `xml:",chardata"`
	} `xml:"data"`
}

// GS1 reports whether zbar read the symbol as GS1 (an FNC1 after its start).
func (s zbarSymbol) GS1() bool { return slices.Contains(strings.Fields(s.Modifiers), "GS1") }

// scanXML returns the symbols zbarimg --xml reads off an image file.
func scanXML(t *testing.T, zbar, file string) []zbarSymbol {
	t.Helper()
	out, err := exec.Command(zbar, "--xml", "-q", file).Output()
	if err != nil {
		t.Fatalf("zbarimg --xml %s: %v (no barcode found?)", filepath.Base(file), err)
	}
	var doc struct {
		Symbols []zbarSymbol `xml:"source>index>symbol"`
	}
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("zbarimg --xml output: %v\n%s", err, out)
	}
	for i := range doc.Symbols {
		s := &doc.Symbols[i]
		s.Data = s.RawData.Text
		if s.RawData.Format == "base64" {
			b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s.Data))
			if err != nil {
				t.Fatalf("zbarimg --xml data %q: %v", s.Data, err)
			}
			s.Data = string(b)
		}
	}
	return doc.Symbols
}

func TestServiceName(t *testing.T) {
	tests := []struct{ carrier, code, want string }{
		{"POSTLINE", "GROUND_ADVANTAGE", "Ground Advantage"},
		{"PARCELCO", "TWO_DAY", "2nd Day"},
		{"REGIONALX", "REGSL", "Regional Saver Lite"},
		{"ACME", "SAME_DAY", "Same Day"}, // a plugged-in carrier: the code in words
		{"POSTLINE", "REGEA", "Regea"},   // not this carrier's service
		{"ACME", "évening-express", "Évening Express"},
	}
	for _, tt := range tests {
		if got := ServiceName(tt.carrier, tt.code); got != tt.want {
			t.Errorf("ServiceName(%q, %q) = %q; want %q", tt.carrier, tt.code, got, tt.want)
		}
	}
	// Every built-in service has a name of its own.
	for _, card := range carrier.SampleCards() {
		for _, s := range card.Services {
			if s.Name == "" || s.Name == s.Code {
				t.Errorf("%s %s has no display name in carriers.json", card.Code, s.Code)
			}
		}
	}
}

func TestFormatOunces(t *testing.T) {
	for _, tt := range []struct {
		oz   int64
		want string
	}{{1, "1 OZ"}, {15, "15 OZ"}, {16, "1 LB"}, {31, "1 LB 15 OZ"}, {2400, "150 LB"}} {
		if got := FormatOunces(tt.oz); got != tt.want {
			t.Errorf("FormatOunces(%d) = %q; want %q", tt.oz, got, tt.want)
		}
	}
}

func TestAddressLines(t *testing.T) {
	got := addressLines(shipping.Address{Name: "A", Street1: "1 Main", City: "Town", State: "TX", Zip: "75001", Country: "US"})
	want := []string{"A", "1 Main", "Town, TX 75001", "US"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("addressLines = %q; want %q", got, want)
	}
}

// TestLabelPNGMatchesPDF checks the PNG and the PDF are one layout: rendered at 203 dpi, the
// PDF's frame, rules, service band and barcode fall on the PNG's pixels.
func TestLabelPNGMatchesPDF(t *testing.T) {
	tool := tooltest.Require(t, "pdftoppm")
	d := sampleLabel("PL80007652062298081")
	d.Customs = true
	p, err := d.PDF()
	if err != nil {
		t.Fatal(err)
	}
	fromPDF, _ := renderPDF(t, tool, p, labelDPI)
	b, err := d.PNG()
	if err != nil {
		t.Fatal(err)
	}
	fromPNG, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if fromPDF.Bounds() != fromPNG.Bounds() {
		t.Fatalf("PDF at 203 dpi is %v, PNG %v", fromPDF.Bounds(), fromPNG.Bounds())
	}
	rows := map[string]int{"frame top": labelMargin + 1, "service band": 160, "rule under FROM": 448,
		"rule above barcode": 814, "barcode": BarcodeRow, "rule under barcode": 1072, "customs box": 1088, "frame bottom": labelHeight - labelMargin - 2}
	for name, y := range rows {
		differ := 0
		for x := 0; x < labelWidth; x++ {
			if isDark(fromPDF, x, y) != isDark(fromPNG, x, y) {
				differ++
			}
		}
		// Anti-aliased edges may fall either way.
		if differ > labelWidth/100 {
			t.Errorf("%s (row %d): %d of %d pixels differ between the PDF and the PNG", name, y, differ, labelWidth)
		}
	}
	for _, x := range []int{labelMargin + 1, labelWidth - labelMargin - 2} {
		differ := 0
		for y := 0; y < labelHeight; y++ {
			if isDark(fromPDF, x, y) != isDark(fromPNG, x, y) {
				differ++
			}
		}
		if differ > labelHeight/100 {
			t.Errorf("frame side (column %d): %d of %d pixels differ between the PDF and the PNG", x, differ, labelHeight)
		}
	}
}

// longLabel has every field at a length a client may send.
func longLabel() Document {
	return Document{
		From: shipping.Address{Name: strings.Repeat("Very Long Name ", 17), Company: "Company With A Long Name Incorporated International",
			Street1: "12345 Some Extremely Long Boulevard Name", Street2: "Building 7, Floor 12, Suite 1200",
			City: "Rancho Santa Margarita", State: "CA", Zip: "92688", Country: "US"},
		To: shipping.Address{Name: "Dr. Maximilian Alexander Worthington-Smythe III", Company: "Worthington Holdings & Logistics LLC",
			Street1: "98765 North Martin Luther King Jr Boulevard", Street2: "Apartment 4B ☃ 雪", City: "Winston-Salem",
			State: "NC", Zip: "27101-1234", Country: "US"},
		Carrier: "REGIONALX", Service: "Regional Saver Lite", ShipDate: "2026-12-31",
		TrackingCode: "RX" + strings.Repeat("1234567890", 3) + "AB", BillableWeight: "149 LB 15 OZ", Weight: "67.99 KG",
		Dimensions: "107.5 x 60.25 x 55 CM", Reference: strings.Repeat("REF-", 60), Customs: true,
	}
}

// TestLongTextStaysInItsBox renders a label whose every line is too long: text is narrowed,
// shrunk or cut, never drawn over the frame or into the customs box, in the PNG and the PDF.
func TestLongTextStaysInItsBox(t *testing.T) {
	d := longLabel()
	b, err := d.PNG()
	if err != nil {
		t.Fatal(err)
	}
	fromPNG, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]image.Image{"PNG": fromPNG}
	if tool, err := exec.LookPath("pdftoppm"); err == nil {
		p, err := d.PDF()
		if err != nil {
			t.Fatal(err)
		}
		images["PDF"], _ = renderPDF(t, tool, p, labelDPI)
	}
	// The gap between the text boxes and the frame, on the right, in the FROM and SHIP TO
	// blocks; and between the footer's text and the customs box.
	gaps := []image.Rectangle{
		image.Rect(labelWidth-labelMargin-labelPad+4, 240, labelWidth-labelMargin-frameWidth-1, 440),
		image.Rect(labelWidth-labelMargin-labelPad+4, 500, labelWidth-labelMargin-frameWidth-1, 800),
		image.Rect(labelWidth-labelMargin-labelPad-296, 1092, labelWidth-labelMargin-labelPad-282, 1185),
	}
	for format, img := range images {
		for _, g := range gaps {
			for y := g.Min.Y; y < g.Max.Y; y++ {
				for x := g.Min.X; x < g.Max.X; x++ {
					if isDark(img, x, y) {
						t.Fatalf("%s: text drawn at (%d, %d), in the gap %v", format, x, y, g)
					}
				}
			}
		}
	}
	if _, err := exec.Command("zbarimg", "-h").Output(); err == nil {
		file := filepath.Join(t.TempDir(), "long.png")
		os.WriteFile(file, b, 0o644)
		if got := scanWithZbar(t, "zbarimg", file); got != "CODE-128:"+d.TrackingCode {
			t.Errorf("zbarimg read %q off the long label; want CODE-128:%s", got, d.TrackingCode)
		}
	}
}

func BenchmarkLabelRender(b *testing.B) {
	d := sampleLabel("PL80007652062298081")
	for _, format := range []string{shipping.LabelFormatPDF, shipping.LabelFormatZPL, shipping.LabelFormatPNG} {
		b.Run(format, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, err := d.Render(format); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
