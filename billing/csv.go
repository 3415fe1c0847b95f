package billing

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
)

// CSVHeader is the header row of an invoice's CSV document.
var CSVHeader = []string{"line_item_id", "created_at", "type", "description", "carrier", "service",
	"tracking_code", "purchased_at", "shipping_label_status", "postage_cents", "surcharges_cents",
	"retail_cents", "total_cents"}

// WriteCSV writes an invoice's CSV document: the header row, then exactly one row per live line
// item (oldest first, as given). There is no total or summary row: a spreadsheet sums the
// total_cents column, and every row is a line item a program can read alike.
func WriteCSV(w io.Writer, items []LineItem) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	for _, it := range items {
		cw.Write([]string{it.ID, stamp(it.CreatedAt.Time), it.Type, cell(it.Description), cell(deref(it.Carrier)),
			cell(deref(it.Service)), cell(deref(it.TrackingCode)), stampPtr(it.PurchasedAt),
			cell(deref(it.ShippingLabelStatus)), cents(it.PostageCents), cents(it.SurchargesCents),
			centsPtr(it.RetailCents), cents(it.TotalCents)})
	}
	cw.Flush()
	return cw.Error()
}

// cell keeps text from being read as a formula by spreadsheet programs (CSV injection).
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func stamp(t time.Time) string { return shipping.FormatTime(t) }

func stampPtr(t *shipping.Timestamp) string {
	if t == nil {
		return ""
	}
	return stamp(t.Time)
}

func cents(n int64) string { return strconv.FormatInt(n, 10) }

func centsPtr(n *int64) string {
	if n == nil {
		return ""
	}
	return cents(*n)
}
