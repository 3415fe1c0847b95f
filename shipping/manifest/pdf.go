package manifest

import (
	"fmt"
	"strconv"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/barcode"
	"github.com/waybill/waybill/shipping/pdf"
)

// Page layout of the manifest PDF, in points on US Letter.
const (
	margin    = 50.0
	right     = pdf.LetterWidth - margin
	top       = pdf.LetterHeight - margin
	tableFont = 9.0
	rowHeight = 13.0
	bottom    = margin + 24
	// module is the width of the barcode's narrowest bar: 1 pt (0.35 mm) keeps a 36-character
	// manifest id within the page and readable by a scanner at 150 dpi and up.
	module        = 1.0
	barcodeHeight = 46.0
	// signatureSpace is the room the signature block takes at the end of the table.
	signatureSpace = 120.0
)

// Table columns: left edges, and the right edge of the weight.
var (
	colIndex, colTracking, colService, colZip = margin, margin + 40, margin + 230, right - 60
	colWeight                                 = right - 80
)

// PDF draws the manifest the driver signs, on US Letter: the shipper, carrier, ship date and
// label count; a Code 128 barcode of the manifest id; a table of every label (tracking number,
// service, weight, destination ZIP) over as many pages as it needs; and the signature block.
// The same manifest gives the same bytes.
func PDF(m Manifest) []byte {
	var doc pdf.Document
	var pages []*pdf.Page
	newPage := func() *pdf.Page {
		p := doc.AddPage(pdf.LetterWidth, pdf.LetterHeight)
		pages = append(pages, p)
		return p
	}
	page := newPage()

	y := top
	page.Text(margin, y, 18, pdf.HelveticaBold, "CARRIER MANIFEST")
	page.TextRight(right, y, 18, pdf.HelveticaBold, pdf.Fit(pdf.HelveticaBold, 18, 200, m.Carrier))
	y -= 16
	page.FillGray(0.4)
	page.Text(margin, y, 9, pdf.Helvetica, "End-of-day close-out: the carrier takes these parcels into its network.")
	page.FillGray(0)

	// Shipper, left; the manifest's facts, right.
	y -= 26
	page.FillGray(0.4)
	page.Text(margin, y, 8, pdf.HelveticaBold, "SHIPPER")
	page.FillGray(0)
	left := y - 14
	page.Text(margin, left, 10.5, pdf.HelveticaBold, pdf.Fit(pdf.HelveticaBold, 10.5, 260, m.Shipper.Name))
	for _, l := range m.Shipper.Address {
		left -= 13
		page.Text(margin, left, 9.5, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 9.5, 260, l))
	}
	facts := [][2]string{
		{"Carrier", m.Carrier},
		{"Ship date", m.ShipDate},
		{"Labels", strconv.Itoa(len(m.Lines))},
		{"Manifest", m.ID},
		{"Created", shipping.FormatTime(m.CreatedAt)},
	}
	factY := y
	for _, f := range facts {
		page.Text(right-250, factY, 9, pdf.HelveticaBold, f[0])
		page.TextRight(right, factY, 9, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 9, 190, f[1]))
		factY -= 13
	}
	y = min(left, factY) - 24

	// The manifest id as a barcode, for the carrier's scanner.
	if modules, err := barcode.Modules(m.ID); err == nil {
		y -= barcodeHeight
		x := margin + barcode.QuietZone*module
		for i, w := range modules {
			if i%2 == 0 {
				page.Rect(x, y, float64(w)*module, barcodeHeight)
			}
			x += float64(w) * module
		}
		y -= 12
		page.Text(margin+barcode.QuietZone*module, y, 9, pdf.Helvetica, m.ID)
	}
	y -= 28

	header := func(p *pdf.Page, y float64) float64 {
		p.FillGray(0.88)
		p.Rect(margin-4, y-4, right-margin+8, rowHeight+2)
		p.FillGray(0)
		p.Text(colIndex, y, tableFont, pdf.HelveticaBold, "#")
		p.Text(colTracking, y, tableFont, pdf.HelveticaBold, "Tracking number")
		p.Text(colService, y, tableFont, pdf.HelveticaBold, "Service")
		p.TextRight(colWeight, y, tableFont, pdf.HelveticaBold, "Weight (oz)")
		p.Text(colZip, y, tableFont, pdf.HelveticaBold, "Dest. ZIP")
		return y - rowHeight - 4
	}
	continued := func() {
		page = newPage()
		y = top
		page.Text(margin, y, 10, pdf.HelveticaBold, pdf.Fit(pdf.HelveticaBold, 10, right-margin,
			"Manifest "+m.ID+" - "+m.Carrier+" - "+m.ShipDate+" (continued)"))
		y -= 24
	}
	y = header(page, y)
	for i, l := range m.Lines {
		if y < bottom {
			continued()
			y = header(page, y)
		}
		page.Text(colIndex, y, tableFont, pdf.Helvetica, strconv.Itoa(i+1))
		page.Text(colTracking, y, tableFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, tableFont, colService-colTracking-8, l.TrackingCode))
		page.Text(colService, y, tableFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, tableFont, colWeight-colService-70, l.Service))
		page.TextRight(colWeight, y, tableFont, pdf.Helvetica, number(l.WeightOz))
		page.Text(colZip, y, tableFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, tableFont, right-colZip, l.To.Zip))
		y -= rowHeight
	}

	// The signature block, after the last row.
	if y-signatureSpace < bottom-10 {
		continued()
	}
	y -= 20
	page.Text(margin, y, 10, pdf.HelveticaBold, fmt.Sprintf("Total: %d labels", len(m.Lines)))
	y -= 40
	for _, f := range []string{"Driver signature", "Date and time of pickup", "Pieces received"} {
		page.Line(margin+150, y, right, y, 0.6)
		page.Text(margin, y+2, 9.5, pdf.Helvetica, f)
		y -= 28
	}

	for i, p := range pages {
		p.FillGray(0.4)
		p.Text(margin, margin-20, 7.5, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 7.5, 380, "Manifest "+m.ID+" - "+m.Carrier+" - "+m.ShipDate))
		p.TextRight(right, margin-20, 7.5, pdf.Helvetica, fmt.Sprintf("Page %d of %d", i+1, len(pages)))
		p.FillGray(0)
	}
	return doc.Bytes()
}
