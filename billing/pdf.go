package billing

import (
	"fmt"
	"strconv"

	"github.com/waybill/waybill/shipping/pdf"
)

// Account is who an invoice document is addressed to.
type Account struct {
	ID    string
	Name  string
	Brand string
}

// Page layout of the invoice PDF, in points on US Letter.
const (
	margin      = 50.0
	rowHeight   = 14.0
	tableFont   = 8.5
	footerSpace = 40.0
)

// table columns: left edge of each, and the right edge of the amount.
var (
	colDate, colType, colDesc, colTracking = margin, margin + 62, margin + 112, margin + 330
	colAmountRight                         = pdf.LetterWidth - margin
)

// RenderPDF draws an invoice as a US Letter PDF: a header with the account, the invoice
// number, period and dates; the live line items (oldest first, as given) in a table over as
// many pages as they need; and the total. The same arguments give the same bytes.
func RenderPDF(inv Invoice, acct Account, items []LineItem) []byte {
	var doc pdf.Document
	var pages []*pdf.Page
	newPage := func() *pdf.Page {
		p := doc.AddPage(pdf.LetterWidth, pdf.LetterHeight)
		pages = append(pages, p)
		return p
	}
	page := newPage()
	y := pdf.LetterHeight - margin - 10

	page.Text(margin, y, 22, pdf.HelveticaBold, "INVOICE")
	page.TextRight(colAmountRight, y, 12, pdf.HelveticaBold, inv.Number)
	y -= 16
	page.TextRight(colAmountRight, y, 9, pdf.Helvetica, "Status: "+string(inv.Status))
	y -= 24

	billTo := acct.Name
	if acct.Brand != "" && acct.Brand != acct.Name {
		billTo += " (" + acct.Brand + ")"
	}
	rows := [][2]string{
		{"Bill to", billTo},
		{"Account", acct.ID},
		{"Billing period", inv.PeriodStart + " to " + inv.PeriodEnd},
		{"Invoice date", orDash(inv.InvoiceDate)},
		{"Due date", orDash(inv.DueDate)},
		{"Currency", inv.Currency},
	}
	for _, r := range rows {
		page.Text(margin, y, 9, pdf.HelveticaBold, r[0])
		page.Text(margin+100, y, 9, pdf.Helvetica, fit(pdf.Helvetica, 9, colAmountRight-margin-100, r[1]))
		y -= 13
	}
	y -= 14

	header := func(p *pdf.Page, y float64) float64 {
		p.FillGray(0.88)
		p.Rect(margin-4, y-4, colAmountRight-margin+8, rowHeight+2)
		p.FillGray(0)
		p.Text(colDate, y, tableFont, pdf.HelveticaBold, "Date")
		p.Text(colType, y, tableFont, pdf.HelveticaBold, "Type")
		p.Text(colDesc, y, tableFont, pdf.HelveticaBold, "Description")
		p.Text(colTracking, y, tableFont, pdf.HelveticaBold, "Tracking code")
		p.TextRight(colAmountRight, y, tableFont, pdf.HelveticaBold, "Amount")
		return y - rowHeight - 4
	}
	y = header(page, y)
	if len(items) == 0 {
		page.Text(colDesc, y, tableFont, pdf.Helvetica, "No charges in this period.")
		y -= rowHeight
	}
	for _, it := range items {
		if y < margin+footerSpace {
			page = newPage()
			y = pdf.LetterHeight - margin - 10
			page.Text(margin, y, 10, pdf.HelveticaBold, "Invoice "+inv.Number+" (continued)")
			y = header(page, y-22)
		}
		page.Text(colDate, y, tableFont, pdf.Helvetica, it.CreatedAt.UTC().Format(DateLayout))
		page.Text(colType, y, tableFont, pdf.Helvetica, it.Type)
		page.Text(colDesc, y, tableFont, pdf.Helvetica, fit(pdf.Helvetica, tableFont, colTracking-colDesc-8, it.Description))
		page.Text(colTracking, y, tableFont, pdf.Helvetica, fit(pdf.Helvetica, tableFont, colAmountRight-colTracking-70, deref(it.TrackingCode)))
		page.TextRight(colAmountRight, y, tableFont, pdf.Helvetica, Money(it.TotalCents))
		y -= rowHeight
	}
	if y < margin+footerSpace {
		page = newPage()
		y = pdf.LetterHeight - margin - 10
	}
	page.Line(margin, y+rowHeight-4, colAmountRight, y+rowHeight-4, 0.8)
	y -= 4
	page.Text(colTracking, y, 10, pdf.HelveticaBold, "Total "+inv.Currency)
	page.TextRight(colAmountRight, y, 10, pdf.HelveticaBold, Money(inv.TotalCents))
	if inv.DeferredCents != 0 {
		y -= rowHeight
		page.Text(colTracking, y, tableFont, pdf.Helvetica, "Deferred (in transit)")
		page.TextRight(colAmountRight, y, tableFont, pdf.Helvetica, Money(inv.DeferredCents))
	}

	// Footers go on last, once the page count is known.
	for i, p := range pages {
		p.Text(margin, margin-20, 7.5, pdf.Helvetica, "Invoice "+inv.Number)
		p.TextRight(colAmountRight, margin-20, 7.5, pdf.Helvetica, fmt.Sprintf("Page %d of %d", i+1, len(pages)))
	}
	return doc.Bytes()
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

// fit shortens s with an ellipsis until it is at most width wide.
func fit(font pdf.Font, size, width float64, s string) string {
	if pdf.TextWidth(font, size, s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && pdf.TextWidth(font, size, string(r)+"...") > width {
		r = r[:len(r)-1]
	}
	return string(r) + "..."
}
