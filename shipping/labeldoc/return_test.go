package labeldoc

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/shipping/tooltest"
)

// TestReturnLabel checks a return label: from the destination to the return address, RETURN
// marked in every format; an outbound label carries no mark.
func TestReturnLabel(t *testing.T) {
	s := &shipping.Shipment{ShipDate: "2026-11-23",
		Origin:        shipping.Address{Name: "Warehouse 9", Street1: "9 Dock Rd", City: "Reno", State: "NV", Zip: "89501", Country: "US"},
		ReturnAddress: shipping.Address{Name: "Returns Dept", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"},
		Destination:   shipping.Address{Name: "Jane Doe", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"},
		Parcel:        shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN", Weight: 20, WeightUnit: "OZ"}}
	l := &shipping.Label{Status: shipping.LabelPreTransit, Carrier: "POSTLINE", Service: "GROUND_ADVANTAGE", TrackingCode: "PL80007652062298081"}
	for _, isReturn := range []bool{false, true} {
		s.IsReturn = isReturn
		d := For(s, l, nil)
		wantFrom, wantTo := "Returns Dept", "Jane Doe"
		if isReturn {
			wantFrom, wantTo = "Jane Doe", "Returns Dept"
		}
		if d.From.Name != wantFrom || d.To.Name != wantTo || d.Return != isReturn {
			t.Errorf("IsReturn=%v: label from %s to %s, Return=%v; want from %s to %s", isReturn, d.From.Name, d.To.Name, d.Return, wantFrom, wantTo)
		}
		for _, c := range []struct{ format, mark string }{{shipping.LabelFormatPDF, "(RETURN) Tj"}, {shipping.LabelFormatZPL, "^FDRETURN^FS"}} {
			b, _, err := d.Render(c.format)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(b, []byte(c.mark)) && bytes.Contains(b, []byte("RETURN TO:")); got != isReturn {
				t.Errorf("IsReturn=%v: %s marked RETURN = %v", isReturn, c.format, got)
			}
		}
		b, err := d.PNG()
		if err != nil {
			t.Fatal(err)
		}
		unmarked := d
		unmarked.Return = false
		p, err := unmarked.PNG()
		if err != nil {
			t.Fatal(err)
		}
		if got := !bytes.Equal(b, p); got != isReturn {
			t.Errorf("IsReturn=%v: PNG differs from the same label unmarked = %v", isReturn, got)
		}
	}
}

// TestLabelsDocument checks a batch's document: one PDF page or one ZPL program per label, in
// order.
func TestLabelsDocument(t *testing.T) {
	codes := []string{"PL80007652062298081", "SWX12345678901234567", "PL55958836184690561"}
	var docs []Document
	for _, c := range codes {
		docs = append(docs, sampleLabel(c))
	}
	p, err := LabelsPDF(docs)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(p, []byte("/Type /Page /Parent")); n != len(codes) {
		t.Errorf("LabelsPDF: %d pages; want %d", n, len(codes))
	}
	z, err := LabelsZPL(docs)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(z, []byte("^XA")); n != len(codes) {
		t.Errorf("LabelsZPL: %d labels; want %d", n, len(codes))
	}
	last := 0
	for _, c := range codes {
		i := bytes.Index(z, []byte(carrier.GroupTrackingCode(c)))
		if i < last {
			t.Errorf("LabelsZPL: %s out of order", c)
		}
		last = i
	}
	if _, err := LabelsPDF(nil); err != nil {
		t.Errorf("LabelsPDF(nil) = %v", err)
	}
}

// TestLabelsPDFInAReader opens a batch's PDF with poppler: one 4 × 6 in page per label, each
// page drawn (the last one as well as the first).
func TestLabelsPDFInAReader(t *testing.T) {
	pdfinfo := tooltest.Require(t, "pdfinfo")
	pdftoppm := tooltest.Require(t, "pdftoppm")
	docs := []Document{sampleLabel("PL80007652062298081"), sampleLabel("SWX12345678901234567"), sampleLabel("PL55958836184690561")}
	docs[2].Return = true
	b, err := LabelsPDF(docs)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "batch.pdf")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pdfinfo, file).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfinfo: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("Pages:           3")) || !bytes.Contains(out, []byte("288 x 432 pts")) {
		t.Errorf("pdfinfo = %s; want 3 pages of 288 x 432 pts (4 x 6 in)", out)
	}
	prefix := filepath.Join(t.TempDir(), "page")
	if out, err := exec.Command(pdftoppm, "-f", "3", "-l", "3", "-r", "50", "-png", file, prefix).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	pages, _ := filepath.Glob(prefix + "*.png")
	if len(pages) != 1 {
		t.Fatalf("pdftoppm page 3: %v", pages)
	}
	f, err := os.Open(pages[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if n := dark(img); n < 1000 {
		t.Errorf("page 3 has %d dark pixels: blank", n)
	}
}
