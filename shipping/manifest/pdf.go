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
	w := &drawing{m: m}
	w.addPage()
	w.title()
	w.shipperAndFacts()
	w.idBarcode()
	w.table()
	if w.y-signatureSpace < bottom-10 {
		w.continued()
	}
	w.signatures()
	w.footers()
	return w.doc.Bytes()
}

// drawing is a manifest being drawn: its pages so far, the one being drawn on, and how far down
// that page the drawing has come.
type drawing struct {
	m     Manifest
	doc   pdf.Document
	pages []*pdf.Page
	page  *pdf.Page
	y     float64
}

func (w *drawing) addPage() {
	w.page = w.doc.AddPage(pdf.LetterWidth, pdf.LetterHeight)
	w.pages = append(w.pages, w.page)
}

// continued starts a new page under a line saying which manifest it continues.
func (w *drawing) continued() {
	w.addPage()
	w.y = top
	w.page.Text(margin, w.y, 10, pdf.HelveticaBold, pdf.Fit(pdf.HelveticaBold, 10, right-margin,
		"Manifest "+w.m.ID+" - "+w.m.Carrier+" - "+w.m.ShipDate+" (continued)"))
	w.y -= 24
}

// title heads the first page with what the document is and the carrier it is for.
func (w *drawing) title() {
	w.y = top
	w.page.Text(margin, w.y, 18, pdf.HelveticaBold, "CARRIER MANIFEST")
	w.page.TextRight(right, w.y, 18, pdf.HelveticaBold, pdf.Fit(pdf.HelveticaBold, 18, 200, w.m.Carrier))
	w.y -= 16
	w.page.FillGray(0.4)
	w.page.Text(margin, w.y, 9, pdf.Helvetica, "End-of-day close-out: the carrier takes these parcels into its network.")
	w.page.FillGray(0)
	w.y -= 26
}

// shipperAndFacts puts the shipper, left, beside the manifest's facts, right.
func (w *drawing) shipperAndFacts() {
	m := w.m
	w.page.FillGray(0.4)
	w.page.Text(margin, w.y, 8, pdf.HelveticaBold, "SHIPPER")
	w.page.FillGray(0)
	left := w.y - 14
	w.page.Text(margin, left, 10.5, pdf.HelveticaBold, pdf.Fit(pdf.HelveticaBold, 10.5, 260, m.Shipper.Name))
	for _, l := range m.Shipper.Address {
		left -= 13
		w.page.Text(margin, left, 9.5, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 9.5, 260, l))
	}
	facts := [][2]string{
		{"Carrier", m.Carrier},
		{"Ship date", m.ShipDate},
		{"Labels", strconv.Itoa(len(m.Lines))},
		{"Manifest", m.ID},
		{"Created", shipping.FormatTime(m.CreatedAt)},
	}
	factY := w.y
	for _, f := range facts {
		w.page.Text(right-250, factY, 9, pdf.HelveticaBold, f[0])
		w.page.TextRight(right, factY, 9, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 9, 190, f[1]))
		factY -= 13
	}
	w.y = min(left, factY) - 24
}

// idBarcode draws the manifest id as a barcode, for the carrier's scanner, when Code 128 can
// encode it.
func (w *drawing) idBarcode() {
	if modules, err := barcode.Modules(w.m.ID); err == nil {
		w.y -= barcodeHeight
		x := margin + barcode.QuietZone*module
		for i, bw := range modules {
			if i%2 == 0 {
				w.page.Rect(x, w.y, float64(bw)*module, barcodeHeight)
			}
			x += float64(bw) * module
		}
		w.y -= 12
		w.page.Text(margin+barcode.QuietZone*module, w.y, 9, pdf.Helvetica, w.m.ID)
	}
	w.y -= 28
}

// table draws a row for every label, heading every page it runs over.
func (w *drawing) table() {
	w.tableHeader()
	for i, l := range w.m.Lines {
		if w.y < bottom {
			w.continued()
			w.tableHeader()
		}
		p := w.page
		p.Text(colIndex, w.y, tableFont, pdf.Helvetica, strconv.Itoa(i+1))
		p.Text(colTracking, w.y, tableFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, tableFont, colService-colTracking-8, l.TrackingCode))
		p.Text(colService, w.y, tableFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, tableFont, colWeight-colService-70, l.Service))
		p.TextRight(colWeight, w.y, tableFont, pdf.Helvetica, number(l.WeightOz))
		p.Text(colZip, w.y, tableFont, pdf.Helvetica, pdf.Fit(pdf.Helvetica, tableFont, right-colZip, l.To.Zip))
		w.y -= rowHeight
	}
}

func (w *drawing) tableHeader() {
	p, y := w.page, w.y
	p.FillGray(0.88)
	p.Rect(margin-4, y-4, right-margin+8, rowHeight+2)
	p.FillGray(0)
	p.Text(colIndex, y, tableFont, pdf.HelveticaBold, "#")
	p.Text(colTracking, y, tableFont, pdf.HelveticaBold, "Tracking number")
	p.Text(colService, y, tableFont, pdf.HelveticaBold, "Service")
	p.TextRight(colWeight, y, tableFont, pdf.HelveticaBold, "Weight (oz)")
	p.Text(colZip, y, tableFont, pdf.HelveticaBold, "Dest. ZIP")
	w.y = y - rowHeight - 4
}

// signatures is the block the driver fills in on pickup, after the label count.
func (w *drawing) signatures() {
	w.y -= 20
	w.page.Text(margin, w.y, 10, pdf.HelveticaBold, fmt.Sprintf("Total: %d labels", len(w.m.Lines)))
	w.y -= 40
	for _, f := range []string{"Driver signature", "Date and time of pickup", "Pieces received"} {
		w.page.Line(margin+150, w.y, right, w.y, 0.6)
		w.page.Text(margin, w.y+2, 9.5, pdf.Helvetica, f)
		w.y -= 28
	}
}

// footers go on last, once the page count is known.
func (w *drawing) footers() {
	m := w.m
	for i, p := range w.pages {
		p.FillGray(0.4)
		p.Text(margin, margin-20, 7.5, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 7.5, 380, "Manifest "+m.ID+" - "+m.Carrier+" - "+m.ShipDate))
		p.TextRight(right, margin-20, 7.5, pdf.Helvetica, fmt.Sprintf("Page %d of %d", i+1, len(w.pages)))
		p.FillGray(0)
	}
}
