package httpapi

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

type invoiceAnswer struct {
	Data struct {
		ID                   string           `json:"id"`
		Status               string           `json:"status"`
		TotalCents           int64            `json:"total_cents"`
		LineItems            []lineItemAnswer `json:"line_items"`
		LineItemsHasNextPage bool             `json:"line_items_has_next_page"`
	} `json:"data"`
}

type lineItemAnswer struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	TotalCents  int64  `json:"total_cents"`
}

type lineItemList struct {
	Data     []lineItemAnswer `json:"data"`
	Metadata metadata         `json:"metadata"`
}

// openInvoiceWithFees opens acme's DRAFT invoice and adds n fees of 1..n cents through the API.
func openInvoiceWithFees(t *testing.T, e *testEnv, n int) string {
	t.Helper()
	inv := decode[invoiceAnswer](t, e.do("POST", "/admin/billing/invoices", "admin", map[string]string{"account_id": e.accounts["acme"].ID}), http.StatusCreated)
	for i := 1; i <= n; i++ {
		body := fmt.Sprintf(`{"description": "Fee %d", "amount_cents": %d}`, i, i)
		if w := e.do("POST", "/admin/billing/invoices/"+inv.Data.ID+"/line_items", "admin", body); w.Code != http.StatusCreated {
			t.Fatalf("adding fee %d: %d %s", i, w.Code, w.Body)
		}
	}
	return inv.Data.ID
}

// TestInvoiceInlineCap: an invoice with more than 250 line items inlines the first 250 (oldest
// first) with line_items_has_next_page, and the line item list pages through all of them with
// a true total_count that leaves out soft-deleted items.
func TestInvoiceInlineCap(t *testing.T) {
	e := newEnv(t)
	const n = 260
	id := openInvoiceWithFees(t, e, n)
	sum := int64(n * (n + 1) / 2)

	inv := decode[invoiceAnswer](t, e.do("GET", "/billing/invoices/"+id, "read_billing", nil), http.StatusOK)
	if len(inv.Data.LineItems) != 250 || !inv.Data.LineItemsHasNextPage || inv.Data.TotalCents != sum {
		t.Fatalf("invoice inlines %d items, has_next_page %v, total %d; want 250, true, %d",
			len(inv.Data.LineItems), inv.Data.LineItemsHasNextPage, inv.Data.TotalCents, sum)
	}
	for i, it := range inv.Data.LineItems {
		if want := "Fee " + strconv.Itoa(i+1); it.Description != want {
			t.Fatalf("inline item %d = %q; want %q (oldest first)", i, it.Description, want)
		}
	}

	// Delete ten items: 250 remain, which fit inline exactly.
	page2 := decode[lineItemList](t, e.do("GET", "/billing/invoices/"+id+"/line_items?page=2&page_size=250", "read_billing", nil), http.StatusOK)
	if len(page2.Data) != 10 || page2.Metadata.TotalCount != n || page2.Metadata.HasNextPage || !page2.Metadata.HasPreviousPage {
		t.Fatalf("page 2 = %d items, metadata %+v; want 10 of %d", len(page2.Data), page2.Metadata, n)
	}
	for _, it := range page2.Data {
		if w := e.do("DELETE", "/admin/billing/line_items/"+it.ID, "admin", nil); w.Code != http.StatusNoContent {
			t.Fatalf("DELETE %s = %d %s", it.ID, w.Code, w.Body)
		}
		sum -= it.TotalCents
	}
	inv = decode[invoiceAnswer](t, e.do("GET", "/billing/invoices/"+id, "read_billing", nil), http.StatusOK)
	if len(inv.Data.LineItems) != 250 || inv.Data.LineItemsHasNextPage || inv.Data.TotalCents != sum {
		t.Errorf("after deleting 10: inlines %d, has_next_page %v, total %d; want 250, false, %d",
			len(inv.Data.LineItems), inv.Data.LineItemsHasNextPage, inv.Data.TotalCents, sum)
	}

	// Paging 7 at a time visits every live item once, and they add up to the total.
	seen := map[string]bool{}
	var paged int64
	for page := 1; ; page++ {
		l := decode[lineItemList](t, e.do("GET", fmt.Sprintf("/billing/invoices/%s/line_items?page=%d&page_size=7", id, page), "read_billing", nil), http.StatusOK)
		if l.Metadata.TotalCount != 250 || l.Metadata.TotalPages != 36 {
			t.Fatalf("page %d metadata = %+v; want total_count 250, total_pages 36", page, l.Metadata)
		}
		for _, it := range l.Data {
			if seen[it.ID] {
				t.Fatalf("item %s listed twice", it.ID)
			}
			seen[it.ID] = true
			paged += it.TotalCents
		}
		if !l.Metadata.HasNextPage {
			break
		}
	}
	if len(seen) != 250 || paged != sum {
		t.Errorf("paging saw %d items summing to %d; want 250 summing to %d", len(seen), paged, sum)
	}
}

// TestInvoiceDocuments finalizes an invoice of 120 fees and checks that the CSV adds up and
// that a real PDF reader renders the PDF over several US Letter pages.
func TestInvoiceDocuments(t *testing.T) {
	e := newEnv(t)
	id := openInvoiceWithFees(t, e, 120)
	decode[invoiceAnswer](t, e.do("POST", "/admin/billing/invoices/"+id+"/finalize", "admin", nil), http.StatusOK)

	w := e.do("GET", "/billing/invoices/"+id+"/csv", "read_billing", nil)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("GET csv = %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	rows, err := csv.NewReader(w.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The header, then exactly one row per line item: no total row.
	if len(rows) != 121 {
		t.Fatalf("CSV has %d rows; want 121 (header, 120 items)", len(rows))
	}
	var sum int64
	for _, r := range rows[1:] {
		n, _ := strconv.ParseInt(r[len(r)-1], 10, 64)
		sum += n
	}
	if sum != 120*121/2 {
		t.Errorf("items sum to %d; want %d", sum, 120*121/2)
	}

	w = e.do("GET", "/billing/invoices/"+id+"/pdf", "read_billing", nil)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(w.Body.Bytes(), []byte("%PDF-")) {
		t.Fatalf("GET pdf = %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body.Bytes()[:min(8, w.Body.Len())])
	}
	bin, err := exec.LookPath("pdftoppm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdftoppm is required in CI")
		}
		t.Skip("pdftoppm not installed")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "invoice.pdf")
	if err := os.WriteFile(in, w.Body.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-r", "20", "-png", in, filepath.Join(dir, "p")).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("pdftoppm: %v %s", err, out)
	}
	// About 30 one-line rows fit the first page and 40 each further one: 120 items need 4.
	if pages, _ := filepath.Glob(filepath.Join(dir, "p*.png")); len(pages) != 4 {
		t.Errorf("pdftoppm rendered %d pages; want 4", len(pages))
	}
}

// TestCloserRuns checks the background loop (not just drain): with the clock past the period,
// a running closer finalizes the invoice.
func TestCloserRuns(t *testing.T) {
	e := newEnv(t)
	id := openInvoiceWithFees(t, e, 1)
	e.setClock(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
	e.api.billing.closer.Every = 5 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.api.billing.closer.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		inv := decode[invoiceAnswer](t, e.do("GET", "/billing/invoices/"+id, "read_billing", nil), http.StatusOK)
		if inv.Data.Status == "OPEN" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("invoice still %s after 10s of a running closer", inv.Data.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Closer.Run = %v; want nil after cancel", err)
	}
}

// TestDeferredPostage: an invoice's deferred_cents is the postage of the labels in transit when
// it is finalized: not of a label delivered (billed on the invoice), nor of one never scanned.
func TestDeferredPostage(t *testing.T) {
	e := newEnv(t)
	type bought struct {
		Data struct {
			ShippingLabel struct {
				TrackingCode string `json:"tracking_code"`
			} `json:"shipping_label"`
			ShippingRates []struct {
				ID    string `json:"id"`
				Price struct {
					Amount float64 `json:"amount"`
				} `json:"price"`
			} `json:"shipping_rates"`
		} `json:"data"`
	}
	var codes []string
	var cents []int64
	for _, oz := range []int{20, 40, 60} {
		s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", fmt.Sprintf(propertyShipment, oz)), http.StatusCreated)
		b := decode[bought](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
		codes = append(codes, b.Data.ShippingLabel.TrackingCode)
		cents = append(cents, int64(math.Round(b.Data.ShippingRates[0].Price.Amount*100)))
	}
	at := e.clock().Format(time.RFC3339Nano)
	for i, status := range []string{"IN_TRANSIT", "DELIVERED"} { // the third is never scanned
		body := fmt.Sprintf(`{"tracking_code": %q, "status": %q, "message": "scan", "occurred_at": %q}`, codes[i], status, at)
		if w := e.do("POST", "/admin/tracking_events", "admin", body); w.Code != http.StatusCreated {
			t.Fatalf("tracking event %s = %d %s", status, w.Code, w.Body)
		}
	}
	list := decode[struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}](t, e.do("GET", "/billing/invoices", "read_billing", nil), http.StatusOK)
	if len(list.Data) != 1 {
		t.Fatalf("%d invoices; want the DRAFT the delivered label is billed on", len(list.Data))
	}
	inv := decode[struct {
		Data struct {
			TotalCents    int64 `json:"total_cents"`
			DeferredCents int64 `json:"deferred_cents"`
		} `json:"data"`
	}](t, e.do("POST", "/admin/billing/invoices/"+list.Data[0].ID+"/finalize", "admin", nil), http.StatusOK)
	if inv.Data.DeferredCents != cents[0] || inv.Data.TotalCents != cents[1] {
		t.Errorf("finalized: deferred_cents %d, total_cents %d; want %d (in transit) and %d (delivered); never scanned: %d",
			inv.Data.DeferredCents, inv.Data.TotalCents, cents[0], cents[1], cents[2])
	}
}
