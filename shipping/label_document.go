package shipping

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping/barcode"
	"github.com/waybill/waybill/shipping/pdf"
)

// LabelDocument is what a printed label shows. It is regenerated from stored data whenever it
// is asked for, and the same data always gives the same bytes.
type LabelDocument struct {
	From, To     Address
	Carrier      string
	Service      string
	ShipDate     string // YYYY-MM-DD
	TrackingCode string
	Weight       string // as shown, e.g. "2.5 LB"
	Reference    string // the shipment's custom_reference_1, if any
	LabelID      string
	// CustomsDeclaration: the parcel travels with a customs declaration (the shipment has
	// customs_info), which the label marks.
	CustomsDeclaration bool
}

// Content types of the label formats.
const (
	ContentTypePDF = "application/pdf"
	ContentTypeZPL = "application/zpl"
)

// Render draws the label in format (PDF or ZPL) and returns it with its content type.
func (d LabelDocument) Render(format string) ([]byte, string, error) {
	if format == LabelFormatZPL {
		b, err := d.ZPL()
		return b, ContentTypeZPL, err
	}
	b, err := d.PDF()
	return b, ContentTypePDF, err
}

// Label geometry, in points from the bottom-left of a 4 × 6 in page.
const (
	labelMargin   = 12.0
	barcodeBottom = 104.0
	barcodeHeight = 72.0
	maxModulePt   = 2.0
)

// BarcodeRow is the height, in points from the bottom of the page, of the middle of the PDF
// label's barcode: a scan line through every bar.
const BarcodeRow = barcodeBottom + barcodeHeight/2

// PDF draws the label as a one-page 4 × 6 in PDF.
func (d LabelDocument) PDF() ([]byte, error) {
	modules, err := barcode.Modules(d.TrackingCode)
	if err != nil {
		return nil, fmt.Errorf("label barcode: %w", err)
	}
	var doc pdf.Document
	p := doc.AddPage(pdf.LabelWidth, pdf.LabelHeight)
	const left, right = labelMargin, pdf.LabelWidth - labelMargin
	width := right - left

	// Frame and header: carrier, service, ship date.
	for _, l := range [][4]float64{{left, labelMargin, right, labelMargin}, {left, pdf.LabelHeight - labelMargin, right, pdf.LabelHeight - labelMargin},
		{left, labelMargin, left, pdf.LabelHeight - labelMargin}, {right, labelMargin, right, pdf.LabelHeight - labelMargin}} {
		p.Line(l[0], l[1], l[2], l[3], 1.5)
	}
	p.Text(left+8, 392, fitSize(pdf.HelveticaBold, 22, width/2, d.Carrier), pdf.HelveticaBold, d.Carrier)
	p.TextRight(right-8, 398, fitSize(pdf.HelveticaBold, 14, width/2-16, d.Service), pdf.HelveticaBold, d.Service)
	p.TextRight(right-8, 384, 8, pdf.Helvetica, "SHIP DATE "+d.ShipDate)
	p.Line(left, 374, right, 374, 1.5)

	// Sender, small; recipient, large.
	y := 362.0
	p.Text(left+8, y, 7, pdf.HelveticaBold, "FROM")
	for _, line := range addressLines(d.From) {
		y -= 10
		p.Text(left+8, y, fitSize(pdf.Helvetica, 8.5, width-16, line), pdf.Helvetica, line)
	}
	p.Line(left, 294, right, 294, 1)
	y = 280
	p.Text(left+8, y, 9, pdf.HelveticaBold, "SHIP TO")
	y -= 4
	for i, line := range addressLines(d.To) {
		size, font := 12.0, pdf.Helvetica
		if i == 0 {
			size, font = 13, pdf.HelveticaBold
		}
		y -= size + 3
		p.Text(left+24, y, fitSize(font, size, width-32, line), font, line)
	}
	p.Line(left, 190, right, 190, 1.5)

	// The barcode, centred, with its quiet zones inside the frame.
	total := barcode.QuietZone * 2
	for _, m := range modules {
		total += m
	}
	module := min(maxModulePt, width/float64(total))
	x := left + (width-module*float64(total-2*barcode.QuietZone))/2
	for i, m := range modules {
		if i%2 == 0 {
			p.Rect(x, barcodeBottom, float64(m)*module, barcodeHeight)
		}
		x += float64(m) * module
	}
	code := "TRACKING # " + d.TrackingCode
	size := fitSize(pdf.HelveticaBold, 12, width-16, code)
	p.Text(left+(width-pdf.TextWidth(pdf.HelveticaBold, size, code))/2, barcodeBottom-16, size, pdf.HelveticaBold, code)
	p.Line(left, 76, right, 76, 1)

	// Footer: weight, reference, label id.
	if d.Weight != "" {
		p.Text(left+8, 60, 9, pdf.Helvetica, "WEIGHT "+d.Weight)
	}
	if d.Reference != "" {
		ref := "REF " + d.Reference
		p.Text(left+8, 46, fitSize(pdf.Helvetica, 9, width-16, ref), pdf.Helvetica, ref)
	}
	p.Text(left+8, 22, 6, pdf.Helvetica, "LABEL "+d.LabelID)
	return doc.Bytes(), nil
}

// fitSize shrinks size until s fits in width (down to 5 pt; longer text overflows).
func fitSize(font pdf.Font, size, width float64, s string) float64 {
	for size > 5 && pdf.TextWidth(font, size, s) > width {
		size -= 0.5
	}
	return size
}

// addressLines is an address as printed: name, company, streets, "City, ST ZIP", country.
func addressLines(a Address) []string {
	var lines []string
	for _, s := range []string{a.Name, a.Company, a.Street1, a.Street2} {
		if s = strings.TrimSpace(s); s != "" {
			lines = append(lines, s)
		}
	}
	city := strings.TrimSpace(a.City)
	if a.State != "" {
		city += ", " + a.State
	}
	if a.Zip != "" {
		city += " " + a.Zip
	}
	lines = append(lines, city)
	if a.Country != "" {
		lines = append(lines, a.Country)
	}
	return lines
}

// ZPL dot geometry: 4 × 6 in at 203 dpi.
const (
	zplWidth  = 812
	zplHeight = 1218
	zplMargin = 30
)

// ZPL writes the label as a ZPL II program for a 203 dpi thermal printer: text fields, boxes
// and a Code 128 barcode (^BC) of the tracking code.
func (d LabelDocument) ZPL() ([]byte, error) {
	modules, err := barcode.Modules(d.TrackingCode) // checks the code is encodable
	if err != nil {
		return nil, fmt.Errorf("label barcode: %w", err)
	}
	var b strings.Builder
	text := func(x, y, h int, s string) {
		fmt.Fprintf(&b, "^FO%d,%d^A0N,%d,%d^FD%s^FS\n", x, y, h, h, zplText(s))
	}
	rule := func(y, thick int) {
		fmt.Fprintf(&b, "^FO%d,%d^GB%d,%d,%d^FS\n", zplMargin, y, zplWidth-2*zplMargin, thick, thick)
	}
	b.WriteString("^XA\n^CI28\n")
	fmt.Fprintf(&b, "^PW%d\n^LL%d\n^LH0,0\n", zplWidth, zplHeight)
	fmt.Fprintf(&b, "^FO%d,%d^GB%d,%d,4^FS\n", zplMargin, zplMargin, zplWidth-2*zplMargin, zplHeight-2*zplMargin)
	text(50, 55, 60, d.Carrier)
	fmt.Fprintf(&b, "^FO%d,%d^FB%d,1,0,R^A0N,40,40^FD%s^FS\n", 400, 55, zplWidth-400-50, zplText(d.Service))
	fmt.Fprintf(&b, "^FO%d,%d^FB%d,1,0,R^A0N,24,24^FD%s^FS\n", 400, 105, zplWidth-400-50, zplText("SHIP DATE "+d.ShipDate))
	rule(145, 4)
	y := 165
	text(50, y, 22, "FROM")
	for _, line := range addressLines(d.From) {
		y += 28
		text(50, y, 24, line)
	}
	rule(390, 3)
	y = 410
	text(50, y, 28, "SHIP TO")
	for i, line := range addressLines(d.To) {
		h := 38
		if i == 0 {
			h = 42
		}
		y += h + 8
		text(100, y, h, line)
	}
	rule(760, 4)
	// ^BY sets the module width in dots: as wide as fits, at most 3.
	total := 2 * barcode.QuietZone
	for _, m := range modules {
		total += m
	}
	by := max(1, min(3, (zplWidth-2*zplMargin)/total))
	x := (zplWidth - by*(total-2*barcode.QuietZone)) / 2
	fmt.Fprintf(&b, "^BY%d,3,200\n^FO%d,790^BCN,200,N,N,N,A^FD%s^FS\n", by, x, zplText(d.TrackingCode))
	fmt.Fprintf(&b, "^FO%d,1005^FB%d,1,0,C^A0N,36,36^FD%s^FS\n", zplMargin, zplWidth-2*zplMargin, zplText("TRACKING # "+d.TrackingCode))
	rule(1060, 3)
	if d.Weight != "" {
		text(50, 1080, 26, "WEIGHT "+d.Weight)
	}
	if d.Reference != "" {
		text(50, 1115, 26, "REF "+d.Reference)
	}
	text(50, 1160, 18, "LABEL "+d.LabelID)
	b.WriteString("^XZ\n")
	return []byte(b.String()), nil
}

// zplText makes s safe as ZPL field data: the command prefixes ^ and ~ and control
// characters would end or corrupt the field.
func zplText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '^' || r == '~':
			return '-'
		case r < 0x20 || r == 0x7f:
			return ' '
		}
		return r
	}, s)
}

// FormatWeight shows a parcel's weight as sent, e.g. "2.5 LB".
func FormatWeight(p Parcel) string {
	if p.Weight <= 0 {
		return ""
	}
	return strconv.FormatFloat(p.Weight, 'f', -1, 64) + " " + p.WeightUnit
}
