package shipping

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping/barcode"
)

func sampleLabel(code string) LabelDocument {
	return LabelDocument{
		From:         Address{Name: "Acme Fulfilment", Company: "Acme Inc.", Street1: "1 Market St", City: "San Francisco", State: "CA", Zip: "94105", Country: "US"},
		To:           Address{Name: "Zoë Müller (Receiving)", Street1: "350 5th Ave", Street2: "Suite 7^10~", City: "New York", State: "NY", Zip: "10118", Country: "US"},
		Carrier:      "SWIFTSHIP",
		Service:      "REGEA",
		ShipDate:     "2026-11-23",
		TrackingCode: code,
		Weight:       "2.5 LB",
		Reference:    "order #1001",
		LabelID:      "00000000-0000-7000-8000-000000000042",
	}
}

// requireTool returns an outside tool's path; a missing tool skips the test, except under
// CI=true, where it fails it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
	return path
}

// TestLabelPDFRendersAndScans renders label PDFs with poppler at 300 dpi and reads the barcode
// back off a row of the rendered image: the drawing is a real, scannable Code 128 of the
// tracking code, for short, long, numeric and mixed codes.
func TestLabelPDFRendersAndScans(t *testing.T) {
	tool := requireTool(t, "pdftoppm")
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
			img := renderPDF(t, tool, doc, 300)
			if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 1800 {
				t.Fatalf("rendered page is %v; want 1200x1800 (4 × 6 in at 300 dpi)", b.Size())
			}
			if n := dark(img); n < 20000 {
				t.Errorf("rendered label has %d dark pixels; want a drawn label", n)
			}
			row := int(math.Round((432 - BarcodeRow) * 300 / 72))
			// Scan between the frame's side lines.
			widths := scanRow(img, row, (labelMargin+3)*300/72, (288-labelMargin-3)*300/72)
			got, err := barcode.Decode(widths)
			if err != nil || got != code {
				t.Errorf("barcode read off the rendered label = %q, %v; want %q", got, err, code)
			}
		})
	}
}

func renderPDF(t *testing.T, tool string, doc []byte, dpi int) image.Image {
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
	return img
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
	for _, want := range []string{"(SWIFTSHIP)", "(REGEA)", "(SHIP DATE 2026-11-23)", "(TRACKING # SWX12345678901234567)",
		"(Zo\\353 M\\374ller \\(Receiving\\))", "(New York, NY 10118)", "(San Francisco, CA 94105)", "(WEIGHT 2.5 LB)", "(REF order #1001)"} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("label PDF lacks %s", want)
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
	for _, want := range []string{"^BCN,200,N,N,N,A^FDSWX12345678901234567^FS", "^FDSHIP TO^FS", "^FDNew York, NY 10118^FS",
		"^FDSuite 7-10-^FS", "^FDZoë Müller (Receiving)^FS", "^CI28"} {
		if !strings.Contains(s, want) {
			t.Errorf("ZPL lacks %q:\n%s", want, s)
		}
	}
	// Field data must never open a command: one ^FD per ^FS.
	if strings.Count(s, "^FD") != strings.Count(s, "^FS")-strings.Count(s, "^GB") {
		t.Errorf("ZPL fields are unbalanced:\n%s", s)
	}
	z2, _ := sampleLabel("SWX12345678901234567").ZPL()
	if !bytes.Equal(z, z2) {
		t.Error("two renderings of the same ZPL differ")
	}
}

func TestLabelRender(t *testing.T) {
	tests := []struct{ format, ct, prefix string }{
		{LabelFormatPDF, ContentTypePDF, "%PDF-1.4"},
		{LabelFormatZPL, ContentTypeZPL, "^XA"},
		{"", ContentTypePDF, "%PDF-1.4"},
	}
	for _, tt := range tests {
		b, ct, err := sampleLabel("ABC123").Render(tt.format)
		if err != nil || ct != tt.ct || !bytes.HasPrefix(b, []byte(tt.prefix)) {
			t.Errorf("Render(%q) = %q…, %q, %v; want %q…, %q", tt.format, b[:min(8, len(b))], ct, err, tt.prefix, tt.ct)
		}
	}
	if _, _, err := sampleLabel("código").Render(LabelFormatPDF); err == nil {
		t.Error("Render of a tracking code that is not ASCII succeeded; want an error")
	}
}

func TestAddressLines(t *testing.T) {
	got := addressLines(Address{Name: "A", Street1: "1 Main", City: "Town", State: "TX", Zip: "75001", Country: "US"})
	want := []string{"A", "1 Main", "Town, TX 75001", "US"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("addressLines = %q; want %q", got, want)
	}
}
