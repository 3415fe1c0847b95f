package billing

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping/pdf"
)

// Account is the account an invoice bills.
type Account struct {
	ID    string
	Name  string
	Brand string
}

// Page layout of the invoice PDF, in points on US Letter.
const (
	margin     = 50.0
	right      = pdf.LetterWidth - margin
	top        = pdf.LetterHeight - margin
	tableFont  = 8.5
	lineHeight = 11.0 // one line of a table row
	rowGap     = 4.0  // between table rows
	bottom     = margin + 30
	// maxDescriptionLines bounds how tall one line item's row grows.
	maxDescriptionLines = 3
)

// Table columns: the left edge of the date and the description, the right edge of the amount.
var (
	colDate, colDesc = margin, margin + 62
	colAmount        = right
	descWidth        = colAmount - 80 - colDesc
)

// PDF draws the invoice as a US Letter PDF: the issuer's letterhead, the bill-to block, the
// invoice number, dates and net terms; the line items with full descriptions (oldest first,
// as given) over as many pages as they need; the total; and deferred postage as a note, not an
// addend. The invoice's status is not printed: the document is the invoice as issued, and stays
// true after it is paid or voided. The same statement gives the same bytes.
func (r Renderer) PDF(st Statement) []byte {
	w := &invoiceDrawing{r: r, st: st, issuer: r.issuer(), terms: "Net " + strconv.Itoa(st.Profile.NetTermsDays)}
	w.addPage()
	leftY := w.letterhead()
	rightY := w.facts()
	w.y = min(leftY-30, rightY-10)
	w.billTo()
	w.amountDue()
	w.lineItems()
	w.total()
	w.footers()
	return w.doc.Bytes()
}

// invoiceDrawing is an invoice being drawn: its pages so far, the one being drawn on, and how
// far down that page the drawing has come.
type invoiceDrawing struct {
	r      Renderer
	st     Statement
	issuer Issuer
	terms  string // "Net 15"
	doc    pdf.Document
	pages  []*pdf.Page
	page   *pdf.Page
	y      float64
}

func (w *invoiceDrawing) addPage() {
	w.page = w.doc.AddPage(pdf.LetterWidth, pdf.LetterHeight)
	w.pages = append(w.pages, w.page)
}

// continued starts a new page under a line saying which invoice it continues.
func (w *invoiceDrawing) continued() {
	w.addPage()
	w.page.Text(margin, top, 10, pdf.HelveticaBold, "Invoice "+w.st.Invoice.Number+" (continued)")
	w.y = top - 24
}

// letterhead draws the issuer's name and address, top left, and returns the height it ends at.
func (w *invoiceDrawing) letterhead() float64 {
	y := top
	w.page.Text(margin, y, 14, pdf.HelveticaBold, pdf.Fit(pdf.HelveticaBold, 14, 300, w.issuer.Name))
	for _, l := range w.issuer.Address {
		y -= 12
		w.page.Text(margin, y, 9, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 9, 300, l))
	}
	return y
}

// facts draws the title and the invoice's number, dates and terms, top right, and returns the
// height they end at.
func (w *invoiceDrawing) facts() float64 {
	inv := w.st.Invoice
	y := top
	w.page.TextRight(right, y, 22, pdf.HelveticaBold, "INVOICE")
	y -= 22
	facts := [][2]string{
		{"Invoice number", inv.Number},
		{"Invoice date", orDash(inv.InvoiceDate)},
		{"Terms", w.terms},
		{"Due date", orDash(inv.DueDate)},
		{"Billing period", inv.PeriodStart + " to " + inv.PeriodEnd},
	}
	for _, f := range facts {
		w.page.Text(right-230, y, 9, pdf.HelveticaBold, f[0])
		w.page.TextRight(right, y, 9, pdf.Helvetica, f[1])
		y -= 13
	}
	return y
}

// billTo draws whom the invoice bills, and the account's id under it.
func (w *invoiceDrawing) billTo() {
	w.page.FillGray(0.4)
	w.page.Text(margin, w.y, 8, pdf.HelveticaBold, "BILL TO")
	w.page.FillGray(0)
	w.y -= 14
	for i, l := range billTo(w.st) {
		font, size := pdf.Helvetica, 9.5
		if i == 0 {
			font, size = pdf.HelveticaBold, 10.5
		}
		w.page.Text(margin, w.y, size, font, pdf.Fit(font, size, 300, l))
		w.y -= 13
	}
	w.page.FillGray(0.4)
	w.page.Text(margin, w.y, 8, pdf.Helvetica, "Account "+w.st.Account.ID)
	w.page.FillGray(0)
}

// amountDue boxes the amount due and its date, beside the bill-to block.
func (w *invoiceDrawing) amountDue() {
	inv := w.st.Invoice
	w.page.FillGray(0.94)
	w.page.Rect(right-230, w.y-6, 230, 46)
	w.page.FillGray(0)
	w.page.Text(right-220, w.y+22, 9, pdf.HelveticaBold, "Amount due ("+inv.Currency+")")
	w.page.TextRight(right-10, w.y+22, 9, pdf.Helvetica, "due "+orDash(inv.DueDate))
	w.page.TextRight(right-10, w.y+2, 16, pdf.HelveticaBold, Money(inv.TotalCents))
	w.y -= 36
}

// lineItems draws the table of line items, heading every page it runs over.
func (w *invoiceDrawing) lineItems() {
	w.tableHeader()
	if len(w.st.Items) == 0 {
		w.page.Text(colDesc, w.y, tableFont, pdf.Helvetica, "No charges in this period.")
		w.y -= lineHeight + rowGap
	}
	for _, it := range w.st.Items {
		lines := w.r.describe(it)
		if w.y-lineHeight*float64(len(lines)-1) < bottom {
			w.continued()
			w.tableHeader()
		}
		w.lineItem(it, lines)
	}
}

func (w *invoiceDrawing) tableHeader() {
	p, y := w.page, w.y
	p.FillGray(0.88)
	p.Rect(margin-4, y-4, right-margin+8, lineHeight+5)
	p.FillGray(0)
	p.Text(colDate, y, tableFont, pdf.HelveticaBold, "Date")
	p.Text(colDesc, y, tableFont, pdf.HelveticaBold, "Description")
	p.TextRight(colAmount, y, tableFont, pdf.HelveticaBold, "Amount")
	w.y = y - lineHeight - 8
}

// lineItem draws one row: the date, the amount, and the description's lines, the first dark
// and the rest in gray.
func (w *invoiceDrawing) lineItem(it LineItem, lines []string) {
	w.page.Text(colDate, w.y, tableFont, pdf.Helvetica, it.CreatedAt.UTC().Format(DateLayout))
	w.page.TextRight(colAmount, w.y, tableFont, pdf.Helvetica, Money(it.TotalCents))
	for i, l := range lines {
		if i > 0 {
			w.page.FillGray(0.35)
		}
		w.page.Text(colDesc, w.y-lineHeight*float64(i), tableFont, pdf.Helvetica, l)
	}
	w.page.FillGray(0)
	w.y -= lineHeight*float64(len(lines)) + rowGap
}

// total draws the total, then deferred postage as a note under it: it is not part of the total.
func (w *invoiceDrawing) total() {
	inv := w.st.Invoice
	note := deferredNote(inv)
	need := 30.0 + 11*float64(len(note))
	if w.y-need < bottom {
		w.continued()
	}
	w.page.Line(margin, w.y+lineHeight-2, right, w.y+lineHeight-2, 0.8)
	w.y -= 6
	w.page.Text(right-230, w.y, 10, pdf.HelveticaBold, "Total due ("+inv.Currency+")")
	w.page.TextRight(colAmount, w.y, 10, pdf.HelveticaBold, Money(inv.TotalCents))
	w.y -= 24
	for i, l := range note {
		font := pdf.Helvetica
		if i == 0 {
			font = pdf.HelveticaBold
		}
		w.page.Text(margin, w.y, 8, font, l)
		w.y -= 11
	}
}

// footers go on last, once the page count is known.
func (w *invoiceDrawing) footers() {
	inv := w.st.Invoice
	for i, p := range w.pages {
		p.FillGray(0.4)
		p.Text(margin, margin-20, 7.5, pdf.Helvetica, pdf.Fit(pdf.Helvetica, 7.5, 380, w.issuer.Name+" - Invoice "+inv.Number+" - "+w.terms+", due "+orDash(inv.DueDate)))
		p.TextRight(right, margin-20, 7.5, pdf.Helvetica, fmt.Sprintf("Page %d of %d", i+1, len(w.pages)))
		p.FillGray(0)
	}
}

// billTo is the bill-to block: the profile's name and address, or else the account's name
// (and brand).
func billTo(st Statement) []string {
	name := st.Profile.BillToName
	if name == "" {
		name = st.Account.Name
		if st.Account.Brand != "" && st.Account.Brand != name {
			name += " (" + st.Account.Brand + ")"
		}
	}
	lines := []string{name}
	if a := st.Profile.BillToAddress; a != nil {
		lines = append(lines, a.Lines()...)
	}
	return lines
}

// describe is a line item's description as the PDF prints it, in at most
// maxDescriptionLines lines: for postage the carrier, the service's name, the tracking code,
// the purchase date and the price's parts; for a fee its description.
func (r Renderer) describe(it LineItem) []string {
	text := it.Description
	var detail string
	if it.Type == Postage {
		text = "Postage: " + deref(it.Carrier) + " " + r.serviceName(deref(it.Carrier), deref(it.Service))
		var parts []string
		if it.TrackingCode != nil {
			parts = append(parts, "tracking "+*it.TrackingCode)
		}
		if it.PurchasedAt != nil {
			parts = append(parts, "purchased "+it.PurchasedAt.UTC().Format(DateLayout))
		}
		parts = append(parts, "postage "+Money(it.PostageCents))
		if it.SurchargesCents != 0 {
			parts = append(parts, "surcharges "+Money(it.SurchargesCents))
		}
		detail = strings.Join(parts, ", ")
	}
	lines := pdf.WrapText(pdf.Helvetica, tableFont, descWidth, text)
	if detail != "" {
		lines = append(lines, pdf.WrapText(pdf.Helvetica, tableFont, descWidth, detail)...)
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	if len(lines) > maxDescriptionLines {
		last := strings.Join(lines[maxDescriptionLines-1:], " ")
		lines = append(lines[:maxDescriptionLines-1], last)
	}
	for i, l := range lines {
		lines[i] = pdf.Fit(pdf.Helvetica, tableFont, descWidth, l)
	}
	return lines
}

// deferredNote explains deferred postage, when there is any, in lines of the page's width.
func deferredNote(inv Invoice) []string {
	if inv.DeferredCents == 0 {
		return nil
	}
	text := fmt.Sprintf("Postage of %s for labels purchased on or before %s that were still in transit when this invoice "+
		"was issued is not included in the total above. It will be billed on a later invoice once those shipments are "+
		"delivered or returned.", Money(inv.DeferredCents), inv.PeriodEnd)
	return append([]string{"Note: deferred postage"}, pdf.WrapText(pdf.Helvetica, 8, right-margin, text)...)
}

// Money formats cents as dollars: 123456 → "$1,234.56", -5 → "-$0.05".
func Money(cents int64) string {
	sign := ""
	u := uint64(cents)
	if cents < 0 {
		sign, u = "-", uint64(-cents)
	}
	whole := strconv.FormatUint(u/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return fmt.Sprintf("%s$%s.%02d", sign, whole, u%100)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
