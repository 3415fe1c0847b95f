package httpapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/waybill/waybill/store"
)

// Documents (labels, invoice PDF and CSV) are reachable two ways: through the bearer routes
// (GET /shipping_labels/{id}/label, GET /billing/invoices/{id}/pdf|csv), and through capability
// URLs, which is what label_url, pdf_url and csv_url are. A capability URL works without a token
// (a label printer, a browser, an email link) because it carries a signature only the server
// can make:
//
//	{base}/documents/shipping_labels/{id}/{sig}
//	{base}/documents/commercial_invoices/{id}/{sig}   (an international label's id)
//	{base}/documents/invoices/{id}/pdf/{sig}
//	{base}/documents/invoices/{id}/csv/{sig}
//
// sig is the unpadded base64url HMAC-SHA256, under a server key kept in the database (so every
// process sharing it signs alike), of the document's kind and id. It is checked in constant time
// before anything is read; a URL changed in any byte is answered 404 not_found, like an unknown
// id. The URL of a document never changes, so answers carry an ETag and may be cached.

// Kinds of signed documents: the kind is signed with the id, so a label's signature opens
// nothing else.
const (
	docLabel      = "shipping_label"
	docInvoicePDF = "invoice_pdf"
	docInvoiceCSV = "invoice_csv"
)

// sigLen is the length of a signature: 32 bytes in unpadded base64url.
var sigLen = base64.RawURLEncoding.EncodedLen(sha256.Size)

// documentState holds the key that signs capability document URLs.
type documentState struct {
	key []byte
	// macs are HMAC-SHA256s under key, reused: Reset returns one to its keyed state without
	// hashing the key again (the signature of every GET of a bought shipment or label).
	macs sync.Pool
}

func newDocumentState(key []byte) *documentState {
	d := &documentState{key: key}
	d.macs.New = func() any { return hmac.New(sha256.New, key) }
	return d
}

// setupDocuments loads (creating at first use) the key that signs document URLs.
func (a *API) setupDocuments() error {
	key, err := a.db.ServerKey(context.Background(), store.DocumentURLKey)
	if err != nil {
		return err
	}
	a.docs = newDocumentState(key)
	return nil
}

// sign is the signature of a document URL.
func (d *documentState) sign(kind, id string) string {
	m := d.macs.Get().(hash.Hash)
	m.Reset()
	msg := make([]byte, 0, 64+len(id))
	msg = append(append(append(append(msg, "waybill document\x00"...), kind...), 0), id...)
	m.Write(msg)
	var sum [sha256.Size]byte
	m.Sum(sum[:0])
	d.macs.Put(m)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// valid reports, in constant time, whether sig is the signature of kind and id.
func (d *documentState) valid(kind, id, sig string) bool {
	return hmac.Equal([]byte(sig), []byte(d.sign(kind, id)))
}

// labelURL is a label's capability URL (label_url).
func (a *API) labelURL(id string) string {
	return a.baseURL + "/documents/shipping_labels/" + id + "/" + a.docs.sign(docLabel, id)
}

// invoiceURLs are an invoice's capability URLs (pdf_url, csv_url).
func (a *API) invoiceURLs(id string) (pdf, csv string) {
	return a.baseURL + "/documents/invoices/" + id + "/pdf/" + a.docs.sign(docInvoicePDF, id),
		a.baseURL + "/documents/invoices/" + id + "/csv/" + a.docs.sign(docInvoiceCSV, id)
}

// public registers a handler that needs no bearer token; a returned error is answered by
// errorFor.
func (a *API) public(pattern string, h handlerFunc) {
	a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.fail(w, r, err)
		}
	})
}

// capability checks the request's signature for kind and its {id}; a bad one is not_found.
func (a *API) capability(kind string, h func(w http.ResponseWriter, r *http.Request, id string) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		if !a.docs.valid(kind, id, r.PathValue("sig")) {
			return store.ErrNotFound
		}
		return h(w, r, id)
	}
}

// loggedPath is the request's path as the logs show it. A capability URL's signature is a
// credential, so a document path is logged as /documents/{kind}/[redacted], and elsewhere (a
// mistyped document URL) any run of base64url characters as long as a signature is left out.
func loggedPath(r *http.Request) string {
	p := r.URL.Path
	if rest, ok := strings.CutPrefix(p, "/documents/"); ok {
		if kind, _, more := strings.Cut(rest, "/"); more {
			return "/documents/" + kind + "/[redacted]"
		}
		return p
	}
	// Copy p, replacing each run of at least sigLen base64url characters.
	var b strings.Builder
	redacted, start := false, 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && base64URLChar(p[i]) {
			continue
		}
		if i-start >= sigLen {
			if !redacted {
				b.WriteString(p[:start])
				redacted = true
			}
			b.WriteString("[redacted]")
		} else if redacted {
			b.WriteString(p[start:i])
		}
		if redacted && i < len(p) {
			b.WriteByte(p[i])
		}
		start = i + 1
	}
	if !redacted {
		return p
	}
	return b.String()
}

func base64URLChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// document is a document answer.
type document struct {
	body        []byte
	contentType string
	// attachment asks the browser to save the file rather than show it.
	attachment bool
	filename   string
	// etag is a digest of body (its SHA-256 when empty); modified, when known, is when the
	// document came to be.
	etag     string
	modified time.Time
	// immutable documents never change at their URL (a finalized invoice's); the others (a
	// label's, which shows VOID once voided) are revalidated by ETag before each use.
	immutable bool
}

// serveDocument answers a document with what a browser or a cache needs: its type, a
// disposition with a file name, an ETag and Cache-Control. Conditional (If-None-Match) and
// range requests are answered by http.ServeContent.
func serveDocument(w http.ResponseWriter, r *http.Request, d document) {
	h := w.Header()
	h.Set("Content-Type", d.contentType)
	disposition := "inline"
	if d.attachment {
		disposition = "attachment"
	}
	h.Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": d.filename}))
	if d.etag == "" {
		sum := sha256.Sum256(d.body)
		d.etag = hex.EncodeToString(sum[:])
	}
	h.Set("ETag", `"`+d.etag+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	if d.immutable {
		h.Set("Cache-Control", "private, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "private, no-cache")
	}
	http.ServeContent(w, r, d.filename, d.modified, bytes.NewReader(d.body))
}
