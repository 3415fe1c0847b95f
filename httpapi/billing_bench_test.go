package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/billing"
)

// benchInvoice gives acme a DRAFT invoice of n fees, added through the store for speed, and
// returns its id.
func benchInvoice(b *testing.B, e *testEnv, n int) string {
	b.Helper()
	ctx := context.Background()
	acct := e.accounts["acme"].ID
	inv, _, err := e.api.billing.service.OpenDraft(ctx, acct)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := e.api.billing.service.AddFee(ctx, acct, inv.ID, "Fee", int64(i+1)); err != nil {
			b.Fatal(err)
		}
	}
	return inv.ID
}

// benchInvoiceDescribed is benchInvoice with each fee described by format (given the item's
// number twice), so that long descriptions are drawn as postage lines are.
func benchInvoiceDescribed(b *testing.B, e *testEnv, n int, format string) string {
	b.Helper()
	ctx := context.Background()
	acct := e.accounts["acme"].ID
	inv, _, err := e.api.billing.service.OpenDraft(ctx, acct)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := e.api.billing.service.AddFee(ctx, acct, inv.ID, fmt.Sprintf(format, i, i), int64(700+i%300)); err != nil {
			b.Fatal(err)
		}
	}
	return inv.ID
}

func authed(method, url, bearer string) *http.Request {
	r, _ := http.NewRequest(method, url, nil)
	r.Header.Set("Authorization", "Bearer "+bearer)
	return r
}

// BenchmarkGetInvoice: GET /billing/invoices/{id} inlining the full 250 line items.
func BenchmarkGetInvoice(b *testing.B) {
	e := newEnv(b)
	id := benchInvoice(b, e, 300)
	tok := e.tokens["read_billing"]
	benchVsBare(b, e.api, http.StatusOK, func(base string, i int) *http.Request {
		return authed("GET", base+"/billing/invoices/"+id, tok)
	})
}

// BenchmarkListLineItems: GET /billing/invoices/{id}/line_items at page 40 of 50-item pages of a
// 2,500-item invoice (offset pagination, as the interface specifies for line items).
func BenchmarkListLineItems(b *testing.B) {
	e := newEnv(b)
	id := benchInvoice(b, e, 2500)
	tok := e.tokens["read_billing"]
	benchVsBare(b, e.api, http.StatusOK, func(base string, i int) *http.Request {
		return authed("GET", base+"/billing/invoices/"+id+"/line_items?page=40", tok)
	})
}

// BenchmarkListInvoices: GET /billing/invoices with a status filter and a search, over three
// years of monthly invoices.
func BenchmarkListInvoices(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	acct := e.accounts["acme"].ID
	at := time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)
	for range 36 {
		e.setClock(at)
		inv, _, err := e.api.billing.service.OpenDraft(ctx, acct)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.api.billing.service.Transition(ctx, acct, inv.ID, billing.Finalize); err != nil {
			b.Fatal(err)
		}
		at = at.AddDate(0, 1, 0)
	}
	tok := e.tokens["read_billing"]
	benchVsBare(b, e.api, http.StatusOK, func(base string, i int) *http.Request {
		return authed("GET", base+"/billing/invoices?status=OPEN&search=inv-2025", tok)
	})
}

// BenchmarkAddFee: POST /admin/billing/invoices/{id}/line_items, a write transaction that also
// keeps the invoice total.
func BenchmarkAddFee(b *testing.B) {
	e := newEnv(b)
	id := benchInvoice(b, e, 0)
	tok := e.tokens["admin"]
	benchVsBare(b, e.api, http.StatusCreated, func(base string, i int) *http.Request {
		r, _ := http.NewRequest("POST", base+"/admin/billing/invoices/"+id+"/line_items",
			strings.NewReader(`{"description": "Fee", "amount_cents": 125}`))
		r.Header.Set("Authorization", "Bearer "+tok)
		r.Header.Set("Content-Type", "application/json")
		return r
	})
}

// BenchmarkInvoicePDF: GET /billing/invoices/{id}/pdf of a finalized 5,000-line invoice (issue
// 10: it took 2.3 s per GET while every GET drew the PDF again).
func BenchmarkInvoicePDF(b *testing.B) {
	e := newEnv(b)
	id := benchInvoiceDescribed(b, e, 5000, "Postage POSTLINE GROUND_ADVANTAGE PL%08d to Jane Doe, 5 Broadway, New York NY 10001, order #%d")
	// Finalizing renders and stores the documents, holding the writer meanwhile: report how long.
	start := time.Now()
	if _, err := e.api.billing.service.Transition(context.Background(), e.accounts["acme"].ID, id, billing.Finalize); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	d, err := e.api.billing.service.Document(context.Background(), e.accounts["acme"].ID, id, billing.DocumentPDF)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("finalizing the 5,000-line invoice (rendering and storing its documents) took %v; the PDF has %d bytes", took, len(d.Body))
	tok := e.tokens["read_billing"]
	benchVsBare(b, e.api, http.StatusOK, func(base string, i int) *http.Request {
		return authed("GET", base+"/billing/invoices/"+id+"/pdf", tok)
	})
}
