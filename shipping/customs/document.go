package customs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping/barcode"
	"github.com/waybill/waybill/shipping/pdf"
)

// Document is what an international label's customs documents show: the declaration (CN22 or
// CN23) printed after the label, and the commercial invoice. Like the label, it is drawn from
// stored data on demand, and the same data gives the same bytes.
type Document struct {
	Declaration  Declaration // as Validate left it
	From, To     Address     // the shipper (sender) and the consignee (addressee)
	Carrier      string      // the carrier as printed on the label
	Service      string      // the service's name as people read it
	TrackingCode string
	Date         string  // the ship date, YYYY-MM-DD
	ParcelOz     float64 // the parcel's weight in ounces
}

// Address is a shipper or consignee as the documents print it (shipping.Address's fields).
type Address struct {
	Name, Company, Street1, Street2, City, State, Zip, Country, Phone, Email string
}

// Form is the declaration the parcel travels with, FormCN22 or FormCN23 (Declaration.Form).
func (d Document) Form() string { return d.Declaration.Form(d.ParcelOz) }

// lines is the address as printed: name, company, streets, "City ST ZIP", the country's name
// and code, phone.
func (a Address) lines() []string {
	var lines []string
	for _, s := range []string{a.Name, a.Company, a.Street1, a.Street2} {
		if s = strings.TrimSpace(s); s != "" {
			lines = append(lines, s)
		}
	}
	city := strings.TrimSpace(strings.Join(strings.Fields(a.City+" "+a.State+" "+a.Zip), " "))
	if a.State != "" && a.City != "" {
		city = strings.TrimSpace(a.City) + ", " + strings.TrimSpace(strings.Join(strings.Fields(a.State+" "+a.Zip), " "))
	}
	if city != "" {
		lines = append(lines, city)
	}
	if a.Country != "" {
		lines = append(lines, countryLine(a.Country))
	}
	if a.Phone != "" {
		lines = append(lines, "Tel. "+a.Phone)
	}
	return lines
}

// countryLine names a country in capitals with its code, "CANADA (CA)", as posts want it.
func countryLine(code string) string {
	if c, ok := LookupCountry(code); ok {
		return strings.ToUpper(c.Name) + " (" + c.Code + ")"
	}
	return code
}

// contentsLabel is a contents type in words.
func contentsLabel(t string) string {
	switch t {
	case ContentsReturnedGoods:
		return "RETURNED GOODS"
	case ContentsSample:
		return "COMMERCIAL SAMPLE"
	case "":
		return ContentsMerchandise
	}
	return t
}

// nonDeliveryLabel is the non-delivery instruction in words.
func nonDeliveryLabel(o string) string {
	if o == NonDeliveryAbandon {
		return "ABANDON"
	}
	return "RETURN TO SENDER"
}

func incotermLabel(t *string) string {
	switch {
	case t == nil || *t == "" || *t == IncotermDAP:
		return "DAP (Delivered at Place)"
	case *t == IncotermDDP:
		return "DDP (Delivered Duty Paid)"
	}
	return *t
}

func hsCode(it Item) string {
	if it.HarmonizedSystemCode == nil {
		return ""
	}
	return *it.HarmonizedSystemCode
}

func itemWeight(it Item) string {
	return trimFloat(it.Weight, 3) + " " + it.WeightUnit
}

// The declaration is laid out once, in printer dots of a 4 × 6 in label at 203 dpi measured
// from the top-left corner, and drawn by the PDF and the ZPL canvases, as the label is.
const (
	dpi        = 203
	pageWidth  = 812
	pageHeight = 1218
	margin     = 16
	pad        = 20
	frame      = 4
	left       = margin + pad
	innerWidth = pageWidth - 2*margin - 2*pad
	pageBottom = pageHeight - margin - pad
)

// align places text in its box.
type align int

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

// canvas is what the layout draws on, in dots from the top-left corner. Text is placed by its
// baseline y in a box from x, width w, at a nominal size (em height) in dots, shrunk to fit
// the box; white text is reversed out of a black fill.
type canvas interface {
	text(x, y, w, size int, bold bool, a align, white bool, s string)
	fill(x, y, w, h int)
	box(x, y, w, h, thick int)
	// barcode draws Code 128 bars (widths as barcode.Modules returns them) with the first bar
	// at x, module dots per module.
	barcode(x, y, module, height int, modules []int, code string)
}

// Item rows: the description on lines of its own over the full width, then one line of facts
// under column heads. The CN22 shrinks its rows, down to the last size, to keep its one page.
var (
	rowSizes = []int{22, 19, 16}
	// Fact columns: left edges, the value's right edge.
	colQty, colWeight, colHS, colOrigin, colValue = left + 24, left + 130, left + 300, left + 500, left + innerWidth
)

const maxDescriptionLines = 3

// row is one item as laid out at a size.
type row struct {
	n     int
	item  Item
	desc  []string
	lineH int
}

func (r row) height() int { return (len(r.desc)+1)*r.lineH + r.lineH/3 }

func layoutRows(items []Item, size int) []row {
	rows := make([]row, len(items))
	for i, it := range items {
		desc := pdf.WrapText(pdf.Helvetica, float64(size), float64(innerWidth-24), it.Description)
		if len(desc) > maxDescriptionLines {
			desc = append(desc[:maxDescriptionLines-1], strings.Join(desc[maxDescriptionLines-1:], " "))
		}
		rows[i] = row{n: i + 1, item: it, desc: desc, lineH: size + size/4}
	}
	return rows
}

func rowsHeight(rows []row) int {
	h := 0
	for _, r := range rows {
		h += r.height()
	}
	return h
}

// Heights of the parts of a page around its items.
const (
	contentsHeight = 44  // the contents line, on the first page
	footHeight     = 300 // the totals, the filing, the certification and the signature
)

// columnHeadHeight is the height of the item columns' heads over rows of size.
func columnHeadHeight(size int) int { return 36 + size }

// cn22Fits reports whether the items fit the CN22's one page at some row size.
func cn22Fits(items []Item) bool {
	_, ok := cn22RowSize(items)
	return ok
}

func cn22RowSize(items []Item) (int, bool) {
	room := pageBottom - footHeight - headHeight - contentsHeight
	for _, size := range rowSizes {
		if columnHeadHeight(size)+rowsHeight(layoutRows(items, size)) <= room {
			return size, true
		}
	}
	return rowSizes[len(rowSizes)-1], false
}

// drawDeclaration draws the CN22 or CN23, each page on a canvas newPage gives.
func (d Document) drawDeclaration(newPage func() canvas) error {
	modules, err := barcode.Modules(d.TrackingCode)
	if err != nil {
		return fmt.Errorf("customs declaration barcode: %w", err)
	}
	form := d.Form()
	items := d.Declaration.CustomsItems
	var pages [][]row
	var size int
	if form == FormCN22 {
		size, _ = cn22RowSize(items)
		pages = [][]row{layoutRows(items, size)}
	} else {
		size = rowSizes[0]
		pages = paginate(layoutRows(items, size), headHeight+d.partiesHeight()+contentsHeight, headHeight, columnHeadHeight(size))
	}
	for i, rows := range pages {
		c := newPage()
		c.box(margin, margin, pageWidth-2*margin, pageHeight-2*margin, frame)
		y := d.drawHead(c, form, i+1, len(pages), modules)
		if form == FormCN23 && i == 0 {
			y = d.drawParties(c, y)
		}
		if i == 0 {
			c.text(left, y+30, innerWidth/2, 26, true, alignLeft, false, "Contents: "+contentsLabel(d.Declaration.ContentsType))
			c.text(left+innerWidth/2, y+30, innerWidth/2, 22, false, alignRight, false, "If undeliverable: "+nonDeliveryLabel(d.Declaration.NonDeliveryOption))
			y += contentsHeight
		}
		y = drawItems(c, y, rows, size)
		if i == len(pages)-1 {
			d.drawFoot(c, y)
		}
	}
	return nil
}

// paginate splits rows over pages whose items start at firstTop on the first page and top on
// the others, under column heads colHead high, keeping room for the foot on the last page (a
// page of its own when needed).
func paginate(rows []row, firstTop, top, colHead int) [][]row {
	var pages [][]row
	var page []row
	y := firstTop + colHead
	for _, r := range rows {
		if y+r.height() > pageBottom && len(page) > 0 {
			pages = append(pages, page)
			page, y = nil, top+colHead
		}
		page = append(page, r)
		y += r.height()
	}
	pages = append(pages, page)
	if y+footHeight > pageBottom {
		pages = append(pages, nil)
	}
	return pages
}

// headHeight is the height of a page's head: the title band, the operator line, the tracking
// number and its barcode.
const headHeight = 318

// drawHead draws the title band, the page number, the carrier and the tracking number with its
// barcode and as posts group it; it returns the y below them.
func (d Document) drawHead(c canvas, form string, page, pages int, modules []int) int {
	const bandTop, bandH = margin, 84
	c.fill(margin, bandTop, pageWidth-2*margin, bandH)
	c.text(left, 74, innerWidth-170, 38, true, alignLeft, true, "CUSTOMS DECLARATION")
	c.text(left+innerWidth-160, 78, 160, 52, true, alignRight, true, form[:2]+" "+form[2:])
	sub := "May be opened officially"
	if pages > 1 {
		sub += fmt.Sprintf(" - page %d of %d", page, pages)
	}
	c.text(left, 130, innerWidth/2-10, 22, false, alignLeft, false, sub)
	c.text(left+innerWidth/2, 130, innerWidth/2, 22, true, alignRight, false, strings.TrimSpace(d.Carrier+" "+d.TrackingCode))

	total := 2 * barcode.QuietZone
	for _, m := range modules {
		total += m
	}
	module := max(1, min(3, (pageWidth-2*margin-2*frame)/total))
	c.barcode((pageWidth-module*(total-2*barcode.QuietZone))/2, 150, module, 100, modules, d.TrackingCode)
	c.text(left, 290, innerWidth, 30, true, alignCenter, false, groupCode(d.TrackingCode))
	c.fill(margin, 304, pageWidth-2*margin, frame)
	return headHeight
}

// groupCode prints an S10 number as posts do and any other tracking number as it is.
func groupCode(code string) string {
	if ValidS10(code) {
		return GroupS10(code)
	}
	return code
}

const partyLines = 6

func (d Document) partiesHeight() int {
	n := max(len(d.From.lines()), len(d.To.lines()))
	return 36 + min(n, partyLines)*24 + 12
}

// drawParties draws the sender and the addressee side by side (the CN23's boxes 1 and 2).
func (d Document) drawParties(c canvas, y int) int {
	half := innerWidth/2 - 10
	for i, p := range []struct {
		head string
		a    Address
	}{{"FROM (sender)", d.From}, {"TO (addressee)", d.To}} {
		x := left + i*(half+20)
		c.text(x, y+28, half, 20, true, alignLeft, false, p.head)
		for j, l := range p.a.lines() {
			if j == partyLines {
				break
			}
			c.text(x, y+54+j*24, half, 20, j == 0, alignLeft, false, l)
		}
	}
	y += d.partiesHeight()
	c.fill(margin, y-4, pageWidth-2*margin, 2)
	return y
}

// drawItems draws the column heads and rows from y; it returns the y below them.
func drawItems(c canvas, y int, rows []row, size int) int {
	if len(rows) == 0 {
		return y
	}
	head := size - 4
	y += 24
	c.text(left, y, 200, head, true, alignLeft, false, "Description")
	y += head + 6
	c.text(colQty, y, colWeight-colQty, head, true, alignLeft, false, "Qty")
	c.text(colWeight, y, colHS-colWeight, head, true, alignLeft, false, "Weight")
	c.text(colHS, y, colOrigin-colHS, head, true, alignLeft, false, "HS code")
	c.text(colOrigin, y, 110, head, true, alignLeft, false, "Origin")
	c.text(colValue-150, y, 150, head, true, alignRight, false, "Value (USD)")
	y += 6
	c.fill(left, y, innerWidth, 2)
	y += 4
	for _, r := range rows {
		for j, l := range r.desc {
			y += r.lineH
			prefix := ""
			if j == 0 {
				prefix = strconv.Itoa(r.n) + ". "
			}
			c.text(left, y, innerWidth, size, false, alignLeft, false, prefix+l)
		}
		y += r.lineH
		c.text(colQty, y, colWeight-colQty-8, size, true, alignLeft, false, strconv.FormatInt(r.item.Quantity, 10))
		c.text(colWeight, y, colHS-colWeight-8, size, false, alignLeft, false, itemWeight(r.item))
		c.text(colHS, y, colOrigin-colHS-8, size, false, alignLeft, false, hsCode(r.item))
		c.text(colOrigin, y, 100, size, false, alignLeft, false, r.item.OriginCountry)
		c.text(colValue-180, y, 180, size, true, alignRight, false, formatCents(valueCents(r.item.Value)))
		y += r.lineH / 3
	}
	return y
}

// certification is the sender's declaration the CN22 and CN23 carry.
const certification = "I certify that the particulars given in this customs declaration are correct and that " +
	"this item does not contain any dangerous article prohibited by legislation or by postal or customs regulations."

// drawFoot draws the totals, the incoterm, the export filing, the certification, the signer and
// the date from y.
func (d Document) drawFoot(c canvas, y int) {
	decl := &d.Declaration
	y += 8
	c.fill(left, y, innerWidth, 2)
	facts := [][2]string{
		{"Total weight", formatOz(decl.WeightOz())},
		{"Total value", formatCents(decl.TotalValueCents()) + " " + Currency},
		{"Incoterm", incotermLabel(decl.Incoterm)},
		{"AES / ITN", d.exportStatement()},
	}
	for _, f := range facts {
		y += 34
		c.text(left, y, 230, 24, true, alignLeft, false, f[0])
		c.text(left+240, y, innerWidth-240, 26, true, alignLeft, false, f[1])
	}
	y += 16
	for _, l := range pdf.WrapText(pdf.Helvetica, 17, innerWidth, certification) {
		y += 21
		c.text(left, y, innerWidth, 17, false, alignLeft, false, l)
	}
	y += 38
	c.text(left, y, innerWidth-250, 24, false, alignLeft, false, "Signature: "+decl.CustomsSigner)
	c.text(left+innerWidth-250, y, 250, 24, false, alignRight, false, "Date: "+d.Date)
}
