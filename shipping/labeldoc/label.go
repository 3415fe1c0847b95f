package labeldoc

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/barcode"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/shipping/customs"
)

// Document is what a printed label shows. It is regenerated from stored data whenever it
// is asked for, and the same data always gives the same bytes. It carries nothing internal:
// no database identifiers are printed.
type Document struct {
	From, To     shipping.Address // as shipping.Shipment.LabelRoute gives them
	Carrier      string           // the carrier's name as people read it, e.g. "Postline"
	Service      string           // the service's name as people read it, e.g. "Ground Advantage"
	ShipDate     string           // YYYY-MM-DD
	TrackingCode string
	// Scheme is the tracking number's scheme (SchemeUSPSIMpb, …), "" when not known; it says
	// what the barcode encodes (LabelBarcode).
	Scheme string
	// BillableWeight is the weight the parcel is priced at, e.g. "1 LB 15 OZ"; Weight is the
	// weight as sent, e.g. "20 OZ"; Dimensions the sides as sent, e.g. "10 x 8 x 4 IN".
	BillableWeight, Weight, Dimensions string
	Reference                          string // the shipment's custom_reference_1, if any
	// Customs marks a shipment that carries a customs declaration (customs_info): the label
	// says so, for the carrier to find the declaration.
	Customs bool
	// Void marks a voided label: VOID is drawn across its face.
	Void bool
	// Return marks a return label: RETURN in a black band in the header, and the recipient
	// headed RETURN TO.
	Return bool
	// Declaration is an international label's customs declaration (CN22 or CN23), printed
	// after the label in PDF and ZPL (not in PNG, which is one image); nil for a domestic label.
	Declaration *customs.Document
}

// Printer is what a carrier also implements to have its labels printed as it prints them:
// its display name, its services' names and its tracking numbers' scheme.
// carrier.Table does. A label of any other carrier shows its code, its service code in words
// (ServiceName) and a plain Code 128 of its tracking number.
type Printer interface {
	// DisplayName is the carrier's name as people read it ("Postline" for POSTLINE).
	DisplayName() string
	// ServiceName is a service's name ("Ground Advantage" for GROUND_ADVANTAGE); ok is false
	// when the carrier does not name it.
	ServiceName(code string) (name string, ok bool)
	// TrackingScheme is the scheme in which the carrier issued trackingCode (SchemeUSPSIMpb, …);
	// "" when none of its schemes makes such a number.
	TrackingScheme(trackingCode string) string
}

// For is what the label l of shipment s shows; c is the label's carrier, nil
// when it is not known.
func For(s *shipping.Shipment, l *shipping.Label, c shipping.Carrier) Document {
	from, to := s.LabelRoute()
	d := Document{From: from, To: to, Return: s.IsReturn, Carrier: l.Carrier, Service: ServiceName(l.Carrier, l.Service),
		ShipDate: s.ShipDate, TrackingCode: l.TrackingCode, Weight: FormatWeight(s.Parcel), Dimensions: FormatDimensions(s.Parcel),
		Customs: s.DeclaresCustoms(), Void: l.Status == shipping.LabelVoided}
	if p, ok := c.(Printer); ok {
		if name := p.DisplayName(); name != "" {
			d.Carrier = name
		}
		if name, ok := p.ServiceName(l.Service); ok {
			d.Service = name
		}
		d.Scheme = p.TrackingScheme(l.TrackingCode)
	}
	if s.CustomReference1 != nil {
		d.Reference = *s.CustomReference1
	}
	if doc, ok := CustomsFor(s, l, c); ok {
		d.Declaration = &doc
	}
	if l.ShippingRate != nil {
		d.BillableWeight = FormatOunces(l.ShippingRate.RateMetadata.BillableWeight)
	} else if s.Parcel.Weight > 0 {
		l, w, h, oz := s.Parcel.Inches()
		d.BillableWeight = FormatOunces(shipping.BillableWeightOz(l, w, h, oz, shipping.DimFactor))
	}
	return d
}

// CustomsFor is what the customs documents of the label l of shipment s show (its CN22
// or CN23 and its commercial invoice); c is the label's carrier, nil when it is not known. ok is
// false for a domestic shipment, which has none.
func CustomsFor(s *shipping.Shipment, l *shipping.Label, c shipping.Carrier) (doc customs.Document, ok bool) {
	if !s.HasCustomsDocuments() {
		return customs.Document{}, false
	}
	carrier, service := l.Carrier, ServiceName(l.Carrier, l.Service)
	if p, ok := c.(Printer); ok {
		if name := p.DisplayName(); name != "" {
			carrier = name
		}
		if name, ok := p.ServiceName(l.Service); ok {
			service = name
		}
	}
	from, to := s.LabelRoute()
	_, _, _, oz := s.Parcel.Inches()
	return customs.Document{Declaration: *s.CustomsInfo, From: customsAddress(from), To: customsAddress(to),
		Carrier: carrier, Service: service, TrackingCode: l.TrackingCode, Date: s.ShipDate, ParcelOz: oz}, true
}

func customsAddress(a shipping.Address) customs.Address {
	return customs.Address{Name: a.Name, Company: a.Company, Street1: a.Street1, Street2: a.Street2, City: a.City,
		State: a.State, Zip: a.Zip, Country: a.Country, Phone: a.Phone, Email: a.Email}
}

// gs1RoutingAI is the GS1 application identifier of a USPS routing code: the destination's
// ZIP code (Publication 199).
const gs1RoutingAI = "420"

// LabelBarcode is what the barcode of a label encodes, FNC1 as barcode.FNC1. A usps_impb
// tracking number is GS1-128 as USPS Publication 199 requires: FNC1, the routing code — AI 420
// and the destination's ZIP5, or its ZIP+4 when given —, FNC1, the 22-digit tracking number
// (without a US ZIP to route to, FNC1 and the number). Every other number is plain Code 128
// of itself. Every element of a GS1 text is digits of even length, so the symbol is code set C
// throughout (the ZPL printer is told so).
func LabelBarcode(scheme, trackingCode string, to shipping.Address) string {
	if scheme != carrier.SchemeUSPSIMpb {
		return trackingCode
	}
	if to.Country != "US" || !shipping.ValidZIPFormat(to.Zip) {
		return barcode.FNC1 + trackingCode
	}
	return barcode.FNC1 + gs1RoutingAI + strings.ReplaceAll(to.Zip, "-", "") + barcode.FNC1 + trackingCode
}

// Content types of the label formats.
const (
	ContentTypePDF = "application/pdf"
	ContentTypeZPL = "application/zpl"
	ContentTypePNG = "image/png"
)

// Render draws the label in format (PDF, ZPL or PNG; PDF when empty) and returns it with its
// content type.
func (d Document) Render(format string) ([]byte, string, error) {
	switch format {
	case shipping.LabelFormatZPL:
		b, err := d.ZPL()
		return b, ContentTypeZPL, err
	case shipping.LabelFormatPNG:
		b, err := d.PNG()
		return b, ContentTypePNG, err
	}
	b, err := d.PDF()
	return b, ContentTypePDF, err
}

// FileExtension is the file name extension of a label document in format.
func FileExtension(format string) string {
	switch format {
	case shipping.LabelFormatZPL:
		return ".zpl"
	case shipping.LabelFormatPNG:
		return ".png"
	}
	return ".pdf"
}

// The label is laid out once, in printer dots of a 4 × 6 in label at 203 dpi measured from the
// top-left corner, and drawn by each format's canvas: the PDF, the PNG and the ZPL show the
// same label.
const (
	labelDPI    = 203
	labelWidth  = 812
	labelHeight = 1218
	labelMargin = 16
	labelPad    = 20
	frameWidth  = 4
	// The barcode's bars: top, height, and the widest module in dots.
	barcodeTop    = 846
	barcodeHeight = 160
	maxModuleDots = 4
)

// BarcodeRow is the row, in dots from the top of the 203 dpi label, through the middle of the
// barcode: a scan line through every bar.
const BarcodeRow = barcodeTop + barcodeHeight/2

// align places text in its box.
type align int

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

// labelCanvas is what the layout draws on, in dots from the top-left corner. Text is placed by
// its baseline y in a box from x, width w, at a nominal size (em height) in dots, shrunk to fit
// the box; white text is reversed out of a black fill.
type labelCanvas interface {
	text(x, y, w, size int, bold bool, a align, white bool, s string)
	fill(x, y, w, h int, white bool)
	box(x, y, w, h, thick int)
	line(x1, y1, x2, y2, thick int)
	// barcode draws Code 128 bars of code (LabelBarcode's; modules as barcode.Modules returns
	// them) with the first bar at x, module dots per module.
	barcode(x, y, module, height int, modules []int, code string)
}

// The frame around the label, and the column its text is set in, in dots.
const (
	frameLeft, frameTop, frameW = labelMargin, labelMargin, labelWidth - 2*labelMargin
	textX, textW                = frameLeft + labelPad, frameW - 2*labelPad
)

// draw lays the label out on c.
func (d Document) draw(c labelCanvas) error {
	code := LabelBarcode(d.Scheme, d.TrackingCode, d.To)
	modules, err := barcode.Modules(code)
	if err != nil {
		return fmt.Errorf("label barcode: %w", err)
	}
	c.box(frameLeft, frameTop, frameW, labelHeight-2*labelMargin, frameWidth)
	d.drawHeader(c)
	d.drawAddresses(c)
	d.drawBarcode(c, code, modules)
	d.drawFooter(c)
	if d.Void {
		drawVoid(c)
	}
	return nil
}

// drawHeader draws the header: the carrier, the label's facts, RETURN on a return label, and
// the service.
func (d Document) drawHeader(c labelCanvas) {
	// Header: carrier on the left; ship date, billable weight and dimensions on the right.
	c.text(textX, 96, textW/2, 60, true, alignLeft, false, d.Carrier)
	facts := []string{"SHIP DATE " + d.ShipDate}
	if d.BillableWeight != "" {
		facts = append(facts, "BILLABLE WT "+d.BillableWeight)
	}
	if d.Dimensions != "" {
		facts = append(facts, "DIMS "+d.Dimensions)
	}
	for i, f := range facts {
		c.text(textX+textW/2, 56+i*34, textW/2, 26, false, alignRight, false, f)
	}

	if d.Return {
		c.fill(textX, 104, 240, 46, false)
		c.text(textX, 142, 240, 38, true, alignCenter, true, "RETURN")
	}

	// The service, reversed out of a black band.
	c.fill(frameLeft, 156, frameW, 76, false)
	c.text(textX, 214, textW, 56, true, alignCenter, true, d.Service)
}

// drawAddresses draws the return address, small, and the recipient, large.
func (d Document) drawAddresses(c labelCanvas) {
	// Return address, small.
	c.text(textX, 272, textW, 24, true, alignLeft, false, "FROM")
	for i, line := range addressLines(d.From) {
		c.text(textX, 300+i*25, textW, 24, false, alignLeft, false, line)
	}

	// Recipient, large.
	c.fill(frameLeft, 446, frameW, frameWidth, false)
	shipTo := "SHIP TO:"
	if d.Return {
		shipTo = "RETURN TO:"
	}
	c.text(textX, 490, textW, 30, true, alignLeft, false, shipTo)
	for i, line := range addressLines(d.To) {
		c.text(textX+40, 544+i*48, textW-40, 44, i == 0, alignLeft, false, line)
	}
}

// drawBarcode draws the barcode of code (its modules), headed by the carrier's name and above
// the tracking number as people read it.
func (d Document) drawBarcode(c labelCanvas, code string, modules []int) {
	// The barcode, centred with its quiet zones inside the frame, at a whole number of dots
	// per module so every bar edge falls on a printer dot.
	c.fill(frameLeft, 812, frameW, frameWidth, false)
	c.text(textX, 838, textW, 24, true, alignCenter, false, d.Carrier+" TRACKING #")
	total := 2 * barcode.QuietZone
	for _, m := range modules {
		total += m
	}
	module := max(1, min(maxModuleDots, (frameW-2*frameWidth)/total))
	c.barcode((labelWidth-module*(total-2*barcode.QuietZone))/2, barcodeTop, module, barcodeHeight, modules, code)
	c.text(textX, 1050, textW, 34, true, alignCenter, false, carrier.GroupTrackingCode(d.TrackingCode))
	c.fill(frameLeft, 1070, frameW, frameWidth, false)
}

// drawFooter draws the reference and the weight as sent, and the customs declaration marker.
func (d Document) drawFooter(c labelCanvas) {
	footW := textW
	if d.Customs {
		footW = textW - 300
		c.box(textX+textW-280, 1086, 280, 104, 4)
		c.text(textX+textW-280, 1130, 280, 34, true, alignCenter, false, "CUSTOMS")
		c.text(textX+textW-280, 1170, 280, 34, true, alignCenter, false, "DECLARATION")
	}
	if d.Reference != "" {
		c.text(textX, 1118, footW, 28, false, alignLeft, false, "REF "+d.Reference)
	}
	if d.Weight != "" {
		c.text(textX, 1160, footW, 28, false, alignLeft, false, "ACTUAL WT "+d.Weight)
	}
}

// drawVoid draws VOID across the label's face: both diagonals and a white panel with the word.
func drawVoid(c labelCanvas) {
	c.line(frameLeft, frameTop, frameLeft+frameW, labelHeight-labelMargin, 12)
	c.line(frameLeft+frameW, frameTop, frameLeft, labelHeight-labelMargin, 12)
	c.fill(146, 500, 520, 220, true)
	c.box(146, 500, 520, 220, 12)
	c.text(146, 670, 520, 190, true, alignCenter, false, "VOID")
}

// addressLines is an address as printed: name, company, streets, "City, ST ZIP", country.
func addressLines(a shipping.Address) []string {
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

// FormatWeight shows a parcel's weight as sent, e.g. "2.5 LB".
func FormatWeight(p shipping.Parcel) string {
	if p.Weight <= 0 {
		return ""
	}
	return strconv.FormatFloat(p.Weight, 'f', -1, 64) + " " + p.WeightUnit
}

// FormatDimensions shows a parcel's sides as sent, e.g. "10 x 8 x 4 IN".
func FormatDimensions(p shipping.Parcel) string {
	if p.Length <= 0 || p.Width <= 0 || p.Height <= 0 {
		return ""
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return f(p.Length) + " x " + f(p.Width) + " x " + f(p.Height) + " " + p.LengthUnit
}

// FormatOunces shows whole ounces as pounds and ounces, as labels print weights: "15 OZ",
// "1 LB 15 OZ", "2 LB".
func FormatOunces(oz int64) string {
	lb, oz := oz/16, oz%16
	switch {
	case lb == 0:
		return strconv.FormatInt(oz, 10) + " OZ"
	case oz == 0:
		return strconv.FormatInt(lb, 10) + " LB"
	}
	return strconv.FormatInt(lb, 10) + " LB " + strconv.FormatInt(oz, 10) + " OZ"
}

// serviceNames maps "CARRIER SERVICE" codes of the built-in carriers to the services' names.
var serviceNames = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, c := range carrier.SampleCards() {
		for _, s := range c.Services {
			if s.Name != "" {
				m[c.Code+" "+s.Code] = s.Name
			}
		}
	}
	return m
})

// ServiceName is the name people read for a carrier's service code: the built-in carriers'
// names from their rate cards ("Ground Advantage" for POSTLINE GROUND_ADVANTAGE); for any other
// carrier, the code in words ("SAME_DAY" reads "Same Day").
func ServiceName(carrier, code string) string {
	if name, ok := serviceNames()[carrier+" "+code]; ok {
		return name
	}
	words := strings.FieldsFunc(code, func(r rune) bool { return r == '_' || r == '-' || r == ' ' })
	for i, w := range words {
		r, n := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + strings.ToLower(w[n:])
	}
	return strings.Join(words, " ")
}
