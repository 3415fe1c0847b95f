package httpapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/store"
)

// fetch GETs a URL of the API without any token.
func (e *testEnv) fetch(t *testing.T, url string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	path, ok := strings.CutPrefix(url, e.url)
	if !ok {
		t.Fatalf("URL %q is not under the base URL %s", url, e.url)
	}
	req := httptest.NewRequest("GET", path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	return w
}

type invoiceURLs struct {
	Data struct {
		ID     string  `json:"id"`
		PDFURL *string `json:"pdf_url"`
		CSVURL *string `json:"csv_url"`
	} `json:"data"`
}

// documentCase is a document URL found in an API answer and the bearer route of the same
// document.
type documentCase struct {
	name, url, bearerPath, token string
	contentType, disposition     string
	prefix                       string // how the body starts
}

// documentURLs buys a PDF, a ZPL and a PNG label and finalizes an invoice, and returns every
// document URL the answers carry.
func documentURLs(t *testing.T, e *testEnv) []documentCase {
	t.Helper()
	var out []documentCase
	for _, f := range []struct{ format, contentType, disposition, prefix string }{
		{"PDF", "application/pdf", "inline", "%PDF-"},
		{"ZPL", "application/zpl", "attachment", "^XA"},
		{"PNG", "image/png", "inline", "\x89PNG"},
	} {
		s := e.createShipment(t, "CHEAPEST", f.format)
		bought := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
		l := bought.Data.ShippingLabel
		if got := decode[shipmentAnswer](t, e.do("GET", "/shipments/"+s.Data.ID, "all", nil), http.StatusOK).Data.ShippingLabel.LabelURL; got != l.LabelURL {
			t.Errorf("GET shipment label_url = %q; buy said %q", got, l.LabelURL)
		}
		out = append(out, documentCase{name: "label " + f.format, url: l.LabelURL, bearerPath: "/shipping_labels/" + l.ID + "/label",
			token: "all", contentType: f.contentType, disposition: f.disposition + "; filename=label-" + l.TrackingCode + "." + strings.ToLower(f.format),
			prefix: f.prefix})
	}
	id := openInvoiceWithFees(t, e, 3)
	fin := decode[invoiceURLs](t, e.do("POST", "/admin/billing/invoices/"+id+"/finalize", "admin", nil), http.StatusOK)
	got := decode[invoiceURLs](t, e.do("GET", "/billing/invoices/"+id, "read_billing", nil), http.StatusOK)
	if fin.Data.PDFURL == nil || fin.Data.CSVURL == nil || got.Data.PDFURL == nil || *got.Data.PDFURL != *fin.Data.PDFURL || *got.Data.CSVURL != *fin.Data.CSVURL {
		t.Fatalf("finalize and GET disagree on the document URLs: %+v, %+v", fin.Data, got.Data)
	}
	out = append(out,
		documentCase{name: "invoice pdf", url: *got.Data.PDFURL, bearerPath: "/billing/invoices/" + id + "/pdf", token: "read_billing",
			contentType: "application/pdf", disposition: "inline; filename=INV-2026-000001.pdf", prefix: "%PDF-"},
		documentCase{name: "invoice csv", url: *got.Data.CSVURL, bearerPath: "/billing/invoices/" + id + "/csv", token: "read_billing",
			contentType: "text/csv; charset=utf-8", disposition: "attachment; filename=INV-2026-000001.csv", prefix: "line_item_id,"})
	return out
}

// TestDocumentURLsWithoutToken fetches every document URL from the API's answers without a
// token: each answers its document with the headers a browser needs, the same bytes as the
// bearer route; any byte changed in the URL is 404 not_found.
func TestDocumentURLsWithoutToken(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t)
	e.api.log = slog.New(slog.NewTextHandler(&logs, nil))
	docs := documentURLs(t, e)
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			w := e.fetch(t, d.url, nil)
			if w.Code != http.StatusOK {
				t.Fatalf("GET %s without a token = %d %s", d.url, w.Code, w.Body)
			}
			h := w.Header()
			if h.Get("Content-Type") != d.contentType || h.Get("Content-Disposition") != d.disposition {
				t.Errorf("Content-Type %q, Content-Disposition %q; want %q, %q", h.Get("Content-Type"), h.Get("Content-Disposition"), d.contentType, d.disposition)
			}
			if !bytes.HasPrefix(w.Body.Bytes(), []byte(d.prefix)) {
				t.Errorf("body starts %q; want %q", w.Body.Bytes()[:min(12, w.Body.Len())], d.prefix)
			}
			etag := h.Get("ETag")
			if len(etag) != 66 || h.Get("Cache-Control") == "" {
				t.Errorf("ETag %q, Cache-Control %q; want a quoted SHA-256 and a caching rule", etag, h.Get("Cache-Control"))
			}
			bearer := e.do("GET", d.bearerPath, d.token, nil)
			if bearer.Code != http.StatusOK || !bytes.Equal(bearer.Body.Bytes(), w.Body.Bytes()) || bearer.Header().Get("ETag") != etag {
				t.Errorf("bearer route %s = %d, %d bytes, ETag %q; want the same document", d.bearerPath, bearer.Code, bearer.Body.Len(), bearer.Header().Get("ETag"))
			}
			if other := e.do("GET", d.bearerPath, "other", nil); other.Code != http.StatusNotFound {
				t.Errorf("another account's bearer GET %s = %d; want 404", d.bearerPath, other.Code)
			}
			if again := e.fetch(t, d.url, http.Header{"If-None-Match": {etag}}); again.Code != http.StatusNotModified || again.Body.Len() != 0 {
				t.Errorf("GET with If-None-Match = %d, %d bytes; want 304 and no body", again.Code, again.Body.Len())
			}

			// Tampering: every byte of the path replaced, the last one dropped, one appended.
			path := strings.TrimPrefix(d.url, e.url)
			var tampered []string
			for i := 1; i < len(path); i++ {
				c := byte('A')
				if path[i] == c {
					c = 'B'
				}
				if path[i] == '/' {
					c = '-'
				}
				tampered = append(tampered, path[:i]+string(c)+path[i+1:])
			}
			tampered = append(tampered, path[:len(path)-1], path+"A", path+"/")
			for _, p := range tampered {
				w := e.fetch(t, e.url+p, nil)
				var body struct {
					Errors struct{ Code string } `json:"errors"`
				}
				json.Unmarshal(w.Body.Bytes(), &body)
				if w.Code != http.StatusNotFound || body.Errors.Code != "not_found" {
					t.Fatalf("GET %s (tampered) = %d %s; want 404 not_found", p, w.Code, w.Body)
				}
			}
		})
	}

	// A signature opens only its own document: each document's path with another's signature.
	for _, a := range docs {
		for _, b := range docs {
			if a.url == b.url {
				continue
			}
			swapped := a.url[:strings.LastIndexByte(a.url, '/')] + b.url[strings.LastIndexByte(b.url, '/'):]
			if w := e.fetch(t, swapped, nil); w.Code != http.StatusNotFound {
				t.Errorf("%s with the signature of %s = %d; want 404", a.name, b.name, w.Code)
			}
		}
	}
	// The logs never show a signature, nor the key.
	key, err := e.db.ServerKey(context.Background(), store.DocumentURLKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		sig := d.url[strings.LastIndexByte(d.url, '/')+1:]
		if strings.Contains(logs.String(), sig) {
			t.Errorf("the log shows the signature of %s: %s", d.name, logs.String()[max(0, strings.Index(logs.String(), sig)-300):strings.Index(logs.String(), sig)+50])
		}
	}
	if strings.Contains(logs.String(), hex.EncodeToString(key)) || !strings.Contains(logs.String(), "/documents/") {
		t.Error("the log shows the key, or no document request at all")
	}
}

// TestDocumentURLsAcrossProcesses: two APIs over one database (two processes) sign alike, so a
// URL one of them gave out opens on the other.
func TestDocumentURLsAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	var apis []*API
	for range 2 {
		db, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		a, err := New(Config{DB: db, BaseURL: "https://a.test"})
		if err != nil {
			t.Fatal(err)
		}
		apis = append(apis, a)
	}
	const id = "00000000-0000-7000-8000-000000000042"
	if one, two := apis[0].labelURL(id), apis[1].labelURL(id); one != two {
		t.Errorf("two APIs over one database sign differently: %s, %s", one, two)
	}
	// Another database has another key.
	if e := newEnv(t); e.api.labelURL(id) == apis[0].labelURL(id) {
		t.Error("two databases share a key")
	}
}

// TestInvoiceDocumentsStoredByCloser: the background closer's finalize stores the documents
// too, with the API's issuer, equal to a fresh render at finalize; paying and voiding do not
// change them, and a bill-to set later does not reach an issued invoice.
func TestInvoiceDocumentsStoredByCloser(t *testing.T) {
	e := newEnv(t)
	e.api.billing.service.Render.Issuer = billing.Issuer{Name: "Closer Test Issuer", Address: []string{"9 Quay St"}}
	acct := e.accounts["acme"].ID
	w := e.do("PATCH", "/admin/accounts/"+acct+"/billing_profile", "admin",
		`{"bill_to_name": "Acme Fulfillment LLC", "bill_to_address": {"street1": "100 Commerce Way", "city": "Reno", "state": "NV", "zip": "89502", "country": "US"}}`)
	if w.Code != http.StatusOK {
		t.Fatalf("PATCH billing_profile = %d %s", w.Code, w.Body)
	}
	id := openInvoiceWithFees(t, e, 5)
	e.setClock(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
	e.drain()
	var st billing.Statement
	err := e.db.BillingTx(context.Background(), func(ctx context.Context, l billing.Ledger) error {
		var err error
		st, err = l.Statement(ctx, acct, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Invoice.Status != billing.Open {
		t.Fatalf("after the closer the invoice is %s; want OPEN", st.Invoice.Status)
	}
	fresh, err := e.api.billing.service.Render.Render(st)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for _, d := range []struct {
			path string
			want []byte
		}{{"/pdf", fresh.PDF}, {"/csv", fresh.CSV}} {
			w := e.do("GET", "/billing/invoices/"+id+d.path, "read_billing", nil)
			if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), d.want) {
				t.Errorf("%s: GET %s = %d, %d bytes; want the %d bytes rendered at finalize", when, d.path, w.Code, w.Body.Len(), len(d.want))
			}
		}
	}
	check("after the closer")
	if !bytes.Contains(fresh.PDF, []byte("Closer Test Issuer")) || !bytes.Contains(fresh.PDF, []byte("Acme Fulfillment LLC")) {
		t.Error("the PDF lacks the configured issuer or the bill-to")
	}
	e.do("PATCH", "/admin/accounts/"+acct+"/billing_profile", "admin", `{"bill_to_name": "Renamed Corp", "bill_to_address": null}`)
	e.api.billing.service.Render.Issuer = billing.Issuer{Name: "Another Issuer"}
	check("after a new bill-to and issuer")
	for _, action := range []string{"mark_uncollectible", "pay"} {
		if w := e.do("POST", "/admin/billing/invoices/"+id+"/"+action, "admin", nil); w.Code != http.StatusOK {
			t.Fatalf("%s = %d %s", action, w.Code, w.Body)
		}
		check("after " + action)
	}
}

func TestLoggedPath(t *testing.T) {
	sig := strings.Repeat("aB3-_", 8) + "xyz" // 43 characters
	tests := []struct{ path, want string }{
		{"/shipments/00000000-0000-7000-8000-00000000000c", "/shipments/00000000-0000-7000-8000-00000000000c"},
		{"/documents/shipping_labels/00000000-0000-7000-8000-00000000000c/" + sig, "/documents/shipping_labels/[redacted]"},
		{"/documents/invoices/00000000-0000-7000-8000-00000000000c/pdf/" + sig[:42], "/documents/invoices/[redacted]"},
		{"/documents/invoices", "/documents/invoices"},
		{"/Documents/invoices/x/pdf/" + sig, "/Documents/invoices/x/pdf/[redacted]"},
		{"/documents-invoices/x/" + sig + "/csv", "/documents-invoices/x/[redacted]/csv"},
		{"/x/" + sig + "." + sig, "/x/[redacted].[redacted]"},
		{"/" + sig[:42], "/" + sig[:42]},
		{"/", "/"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", tt.path, nil)
		if got := loggedPath(r); got != tt.want {
			t.Errorf("loggedPath(%q) = %q; want %q", tt.path, got, tt.want)
		}
	}
}

// TestServiceNames: invoice descriptions name the built-in carriers' services.
func TestServiceNames(t *testing.T) {
	e := newEnv(t)
	tests := []struct{ carrier, service, want string }{
		{"POSTLINE", "GROUND_ADVANTAGE", "Ground Advantage"},
		{"POSTLINE", "NO_SUCH_SERVICE", ""},
		{"NO_SUCH_CARRIER", "GROUND_ADVANTAGE", ""},
	}
	for _, tt := range tests {
		if got := e.api.serviceName(tt.carrier, tt.service); got != tt.want {
			t.Errorf("serviceName(%q, %q) = %q; want %q", tt.carrier, tt.service, got, tt.want)
		}
	}
}

// signHMAC is a document URL's signature computed afresh: what documentState.sign must give.
func signHMAC(key []byte, kind, id string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("waybill document\x00" + kind + "\x00" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// TestSignReusesNoState: signatures from the reused HMACs, from many goroutines at once, are
// each the HMAC computed afresh.
func TestSignReusesNoState(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	d := newDocumentState(key)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				kind := []string{docLabel, docInvoicePDF, docInvoiceCSV}[i%3]
				id := fmt.Sprintf("id-%d-%d", g, i)
				if got, want := d.sign(kind, id), signHMAC(key, kind, id); got != want {
					t.Errorf("sign(%s, %s) = %s; want %s", kind, id, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkSign: a label URL's signature afresh (hmac.New per call, as before) and by sign.
func BenchmarkSign(b *testing.B) {
	key := []byte("0123456789abcdef0123456789abcdef")
	d := newDocumentState(key)
	id := "lbl_0193a1b2c3d47e5f8a9b0c1d2e3f4a5b"
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			signHMAC(key, docLabel, id)
		}
	})
	b.Run("sign", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d.sign(docLabel, id)
		}
	})
}
