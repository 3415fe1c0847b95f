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
	decl := &d.Declaration
	var doc pdf.Document
	var pages []*pdf.Page
	newPage := func() *pdf.Page {
		p := doc.AddPage(pdf.LetterWidth, pdf.LetterHeight)
		pages = append(pages, p)
		return p
	}
	page := newPage()

	// Title; the date and the tracking number, right.
	page.Text(invMargin, invTop-14, 20, pdf.HelveticaBold, "COMMERCIAL INVOICE")
	page.TextRight(invRight, invTop-4, invFont, pdf.Helvetica, "Date: "+d.Date)
	page.TextRight(invRight, invTop-18, invFont, pdf.HelveticaBold, "Tracking number: "+d.TrackingCode)

	// Shipper and consignee side by side.
	y := invTop - 50
	partyBottom := y
	for i, p := range []struct {
		head string
		a    Address
	}{{"SHIPPER / EXPORTER", d.From}, {"CONSIGNEE", d.To}} {
		x := invMargin + float64(i)*260
		py := y
		page.FillGray(0.4)
		page.Text(x, py, 8, pdf.HelveticaBold, p.head)
		page.FillGray(0)
		for j, l := range p.a.lines() {
			py -= 12.5
			font := pdf.Helvetica
			if j == 0 {
				font = pdf.HelveticaBold
			}
			page.Text(x, py, 9.5, font, pdf.Fit(font, 9.5, 245, l))
		}
		partyBottom = min(partyBottom, py)
	}

	// The shipment's and the export's terms, two to a row.
	y = partyBottom - 26
	terms := [][2]string{
		{"Carrier", d.Carrier}, {"Service", d.Service},
		{"Country of export", countryName(d.From.Country)}, {"Country of destination", countryName(d.To.Country)},
		{"Reason for export", contentsLabel(decl.ContentsType)}, {"Incoterm", incotermLabel(decl.Incoterm)},
		{"Currency", Currency}, {"AES / ITN", d.exportStatement()},
	}
	for i, t := range terms {
		x := invMargin + float64(i%2)*260
		page.Text(x, y, invFont-0.5, pdf.HelveticaBold, t[0])
		page.Text(x+105, y, invFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, invFont, 145, t[1]))
		if i%2 == 1 {
			y -= 13
		}
	}
	y -= 24

	header := func(p *pdf.Page, y float64) float64 {
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
		return y - invLine - 6
	}
	continued := func() float64 {
		page = newPage()
		page.Text(invMargin, invTop, 10, pdf.HelveticaBold, "Commercial invoice "+d.TrackingCode+" (continued)")
		return invTop - 40
	}
	y = header(page, y)
	var qty int64
	for i, it := range decl.CustomsItems {
		desc := pdf.WrapText(pdf.Helvetica, invFont, invDescWidth, it.Description)
		if len(desc) > invMaxDescLines {
			desc = append(desc[:invMaxDescLines-1], strings.Join(desc[invMaxDescLines-1:], " "))
		}
		if y-invLine*float64(len(desc)) < invBottom {
			y = header(page, continued())
		}
		page.Text(invColNum, y, invFont, pdf.HelveticaBold, strconv.Itoa(i+1))
		for _, l := range desc {
			page.Text(invColDesc, y, invFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, invFont, invDescWidth, l))
			y -= invLine
		}
		cents := valueCents(it.Value)
		page.Text(invColHS, y, invFont, pdf.Helvetica, hsCode(it))
		page.Text(invColOrigin, y, invFont, pdf.Helvetica, it.OriginCountry)
		page.TextRight(invColQty, y, invFont, pdf.Helvetica, strconv.FormatInt(it.Quantity, 10))
		if it.Quantity > 0 {
			page.TextRight(invColUnit, y, invFont, pdf.Helvetica, formatCents((cents+it.Quantity/2)/it.Quantity))
		}
		page.TextRight(invColTotal, y, invFont, pdf.HelveticaBold, formatCents(cents))
		page.Text(invColWeight, y, invFont, pdf.Helvetica, itemWeight(it))
		y -= invLine + 4
		qty += it.Quantity
	}

	// Totals, the declaration, the signature.
	if y-invFootHeight < invBottom {
		y = continued()
	}
	page.Line(invMargin, y+invLine-2, invRight, y+invLine-2, 0.8)
	y -= 6
	totals := [][2]string{
		{"Total quantity", strconv.FormatInt(qty, 10)},
		{"Total value (" + Currency + ")", formatCents(decl.TotalValueCents())},
		{"Total net weight", formatOz(decl.WeightOz())},
	}
	if d.ParcelOz > 0 {
		totals = append(totals, [2]string{"Gross weight", formatOz(d.ParcelOz)})
	}
	for _, t := range totals {
		page.Text(invRight-250, y, 10, pdf.HelveticaBold, t[0])
		page.TextRight(invRight, y, 10, pdf.HelveticaBold, t[1])
		y -= 14
	}
	y -= 14
	statements := []string{invoiceDeclaration}
	if strings.EqualFold(d.From.Country, "US") {
		statements = append(statements, destinationControlStatement)
	}
	for _, s := range statements {
		for _, l := range pdf.WrapText(pdf.Helvetica, 8.5, invRight-invMargin, s) {
			page.Text(invMargin, y, 8.5, pdf.Helvetica, l)
			y -= 11
		}
		y -= 5
	}
	y -= 20
	page.Text(invMargin, y, 10, pdf.HelveticaBold, "Signature: "+decl.CustomsSigner)
	page.TextRight(invRight, y, 10, pdf.HelveticaBold, "Date: "+d.Date)
	page.Line(invMargin+60, y-3, invMargin+300, y-3, 0.5)

	// Footers go on last, once the page count is known.
	for i, p := range pages {
		p.FillGray(0.4)
		p.Text(invMargin, invMargin-20, 7.5, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 7.5, 380, "Commercial invoice - "+d.Carrier+" "+d.TrackingCode))
		p.TextRight(invRight, invMargin-20, 7.5, pdf.Helvetica, fmt.Sprintf("Page %d of %d", i+1, len(pages)))
		p.FillGray(0)
	}
	return doc.Bytes()
}

// countryName names a country with its code, "Canada (CA)".
func countryName(code string) string {
	if c, ok := LookupCountry(code); ok {
		return c.Name + " (" + c.Code + ")"
	}
	return code
}
