package customs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping/pdf"
)

// Layout of the commercial invoice, in points on US Letter.
const (
	invMargin     = 50.0
	invRight      = pdf.LetterWidth - invMargin
	invTop        = pdf.LetterHeight - invMargin
	invBottom     = invMargin + 30
	invFont       = 9.0
	invLine       = 11.5
	invFootHeight = 190.0 // the totals, the statements and the signature
	// invMaxDescLines bounds how tall one item's description grows.
	invMaxDescLines = 3
)

// Item columns: the number, then the description on lines of its own; under it the facts, by
// left edge (HS code, origin, weight) or right edge (quantity and the values).
var (
	invColNum, invColDesc     = invMargin, invMargin + 22
	invColHS, invColOrigin    = invColDesc, invColDesc + 90
	invColQty, invColUnit     = invColDesc + 200, invColDesc + 290
	invColTotal, invColWeight = invColDesc + 380, invColDesc + 400
	invDescWidth              = invRight - invColDesc
)

// The statements the invoice closes with: the shipper's declaration, and for an export from
// the US the destination control statement of 15 CFR 758.6.
const (
	invoiceDeclaration          = "I declare that all the information contained in this invoice is true and correct, and that the contents and values of this shipment are as stated above."
	destinationControlStatement = "These commodities, technology or software were exported from the United States in accordance with the Export Administration Regulations. Diversion contrary to U.S. law is prohibited."
)

// InvoicePDF draws the commercial invoice as a US Letter PDF: shipper, consignee, tracking
// number, carrier and service, the export's terms (currency, incoterm, reason for export, AES
// ITN or exemption), each item with its HS code, origin, quantity, unit and total value and
// weight over as many pages as they need, the totals, the declaration, the signer and the date.
func (d Document) InvoicePDF() []byte {
	w := &invoiceDrawing{d: d}
	w.addPage()
	w.title()
	w.parties()
	w.terms()
	qty := w.items()
	if w.y-invFootHeight < invBottom {
		w.continued()
	}
	w.totals(qty)
	w.statements()
	w.signature()
	w.footers()
	return w.doc.Bytes()
}

// invoiceDrawing is a commercial invoice being drawn: its pages so far, the one being drawn on,
// and how far down that page the drawing has come.
type invoiceDrawing struct {
	d     Document
	doc   pdf.Document
	pages []*pdf.Page
	page  *pdf.Page
	y     float64
}

func (w *invoiceDrawing) addPage() {
	w.page = w.doc.AddPage(pdf.LetterWidth, pdf.LetterHeight)
	w.pages = append(w.pages, w.page)
}

// continued starts a new page under a line saying whose invoice it continues.
func (w *invoiceDrawing) continued() {
	w.addPage()
	w.page.Text(invMargin, invTop, 10, pdf.HelveticaBold, "Commercial invoice "+w.d.TrackingCode+" (continued)")
	w.y = invTop - 40
}

// title is the heading; the date and the tracking number, right.
func (w *invoiceDrawing) title() {
	w.page.Text(invMargin, invTop-14, 20, pdf.HelveticaBold, "COMMERCIAL INVOICE")
	w.page.TextRight(invRight, invTop-4, invFont, pdf.Helvetica, "Date: "+w.d.Date)
	w.page.TextRight(invRight, invTop-18, invFont, pdf.HelveticaBold, "Tracking number: "+w.d.TrackingCode)
}

// parties puts the shipper and the consignee side by side.
func (w *invoiceDrawing) parties() {
	y := invTop - 50
	partyBottom := y
	for i, p := range []struct {
		head string
		a    Address
	}{{"SHIPPER / EXPORTER", w.d.From}, {"CONSIGNEE", w.d.To}} {
		x := invMargin + float64(i)*260
		py := y
		w.page.FillGray(0.4)
		w.page.Text(x, py, 8, pdf.HelveticaBold, p.head)
		w.page.FillGray(0)
		for j, l := range p.a.lines() {
			py -= 12.5
			font := pdf.Helvetica
			if j == 0 {
				font = pdf.HelveticaBold
			}
			w.page.Text(x, py, 9.5, font, pdf.Fit(font, 9.5, 245, l))
		}
		partyBottom = min(partyBottom, py)
	}
	w.y = partyBottom - 26
}

// terms lists the shipment's and the export's terms, two to a row.
func (w *invoiceDrawing) terms() {
	d, decl := w.d, &w.d.Declaration
	terms := [][2]string{
		{"Carrier", d.Carrier}, {"Service", d.Service},
		{"Country of export", countryName(d.From.Country)}, {"Country of destination", countryName(d.To.Country)},
		{"Reason for export", contentsLabel(decl.ContentsType)}, {"Incoterm", incotermLabel(decl.Incoterm)},
		{"Currency", Currency}, {"AES / ITN", d.exportStatement()},
	}
	for i, t := range terms {
		x := invMargin + float64(i%2)*260
		w.page.Text(x, w.y, invFont-0.5, pdf.HelveticaBold, t[0])
		w.page.Text(x+105, w.y, invFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, invFont, 145, t[1]))
		if i%2 == 1 {
			w.y -= 13
		}
	}
	w.y -= 24
}

// items draws the table of items, heading every page it runs over, and returns the total
// quantity.
func (w *invoiceDrawing) items() (qty int64) {
	w.tableHeader()
	for i, it := range w.d.Declaration.CustomsItems {
		desc := pdf.WrapText(pdf.Helvetica, invFont, invDescWidth, it.Description)
		if len(desc) > invMaxDescLines {
			desc = append(desc[:invMaxDescLines-1], strings.Join(desc[invMaxDescLines-1:], " "))
		}
		if w.y-invLine*float64(len(desc)) < invBottom {
			w.continued()
			w.tableHeader()
		}
		w.item(i+1, it, desc)
		qty += it.Quantity
	}
	return qty
}

// tableHeader heads the item columns: the description's line, then the facts' line under it.
func (w *invoiceDrawing) tableHeader() {
	p, y := w.page, w.y
	p.FillGray(0.88)
	p.Rect(invMargin-4, y-invLine-3, invRight-invMargin+8, 2*invLine+4)
	p.FillGray(0)
	p.Text(invColNum, y, invFont-0.5, pdf.HelveticaBold, "#")
	p.Text(invColDesc, y, invFont-0.5, pdf.HelveticaBold, "Description of goods")
	y -= invLine
	p.Text(invColHS, y, invFont-0.5, pdf.HelveticaBold, "HS code")
	p.Text(invColOrigin, y, invFont-0.5, pdf.HelveticaBold, "Origin")
	p.TextRight(invColQty, y, invFont-0.5, pdf.HelveticaBold, "Quantity")
	p.TextRight(invColUnit, y, invFont-0.5, pdf.HelveticaBold, "Unit value")
	p.TextRight(invColTotal, y, invFont-0.5, pdf.HelveticaBold, "Total value")
	p.Text(invColWeight, y, invFont-0.5, pdf.HelveticaBold, "Weight")
	w.y = y - invLine - 6
}

// item draws item number n: its description's lines, then its facts.
func (w *invoiceDrawing) item(n int, it Item, desc []string) {
	p := w.page
	p.Text(invColNum, w.y, invFont, pdf.HelveticaBold, strconv.Itoa(n))
	for _, l := range desc {
		p.Text(invColDesc, w.y, invFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, invFont, invDescWidth, l))
		w.y -= invLine
	}
	cents := valueCents(it.Value)
	p.Text(invColHS, w.y, invFont, pdf.Helvetica, hsCode(it))
	p.Text(invColOrigin, w.y, invFont, pdf.Helvetica, it.OriginCountry)
	p.TextRight(invColQty, w.y, invFont, pdf.Helvetica, strconv.FormatInt(it.Quantity, 10))
	if it.Quantity > 0 {
		p.TextRight(invColUnit, w.y, invFont, pdf.Helvetica, formatCents((cents+it.Quantity/2)/it.Quantity))
	}
	p.TextRight(invColTotal, w.y, invFont, pdf.HelveticaBold, formatCents(cents))
	p.Text(invColWeight, w.y, invFont, pdf.Helvetica, itemWeight(it))
	w.y -= invLine + 4
}

// totals rules off the table and sums its quantities, values and weights.
func (w *invoiceDrawing) totals(qty int64) {
	decl := &w.d.Declaration
	w.page.Line(invMargin, w.y+invLine-2, invRight, w.y+invLine-2, 0.8)
	w.y -= 6
	totals := [][2]string{
		{"Total quantity", strconv.FormatInt(qty, 10)},
		{"Total value (" + Currency + ")", formatCents(decl.TotalValueCents())},
		{"Total net weight", formatOz(decl.WeightOz())},
	}
	if w.d.ParcelOz > 0 {
		totals = append(totals, [2]string{"Gross weight", formatOz(w.d.ParcelOz)})
	}
	for _, t := range totals {
		w.page.Text(invRight-250, w.y, 10, pdf.HelveticaBold, t[0])
		w.page.TextRight(invRight, w.y, 10, pdf.HelveticaBold, t[1])
		w.y -= 14
	}
	w.y -= 14
}

// statements prints the shipper's declaration and, for an export from the US, the destination
// control statement.
func (w *invoiceDrawing) statements() {
	statements := []string{invoiceDeclaration}
	if strings.EqualFold(w.d.From.Country, "US") {
		statements = append(statements, destinationControlStatement)
	}
	for _, s := range statements {
		for _, l := range pdf.WrapText(pdf.Helvetica, 8.5, invRight-invMargin, s) {
			w.page.Text(invMargin, w.y, 8.5, pdf.Helvetica, l)
			w.y -= 11
		}
		w.y -= 5
	}
	w.y -= 20
}

// signature is the signer's line, with the date.
func (w *invoiceDrawing) signature() {
	w.page.Text(invMargin, w.y, 10, pdf.HelveticaBold, "Signature: "+w.d.Declaration.CustomsSigner)
	w.page.TextRight(invRight, w.y, 10, pdf.HelveticaBold, "Date: "+w.d.Date)
	w.page.Line(invMargin+60, w.y-3, invMargin+300, w.y-3, 0.5)
}

// footers go on last, once the page count is known.
func (w *invoiceDrawing) footers() {
	for i, p := range w.pages {
		p.FillGray(0.4)
		p.Text(invMargin, invMargin-20, 7.5, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 7.5, 380, "Commercial invoice - "+w.d.Carrier+" "+w.d.TrackingCode))
		p.TextRight(invRight, invMargin-20, 7.5, pdf.Helvetica, fmt.Sprintf("Page %d of %d", i+1, len(w.pages)))
		p.FillGray(0)
	}
}

// countryName names a country with its code, "Canada (CA)".
func countryName(code string) string {
	if c, ok := LookupCountry(code); ok {
		return c.Name + " (" + c.Code + ")"
	}
	return code
}
