package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/waybill/waybill/shipping/manifest"
	"github.com/waybill/waybill/store"
)

// Manifests (end-of-day close-out). A manifest and its documents never change: the
// PDF and CSV are rendered in the transaction that creates it and served from the store, through
// capability URLs like a finalized invoice's.

const (
	docManifestPDF = "manifest_pdf"
	docManifestCSV = "manifest_csv"
)

// linkManifest sets a manifest's capability URLs (pdf_url, csv_url).
func (a *API) linkManifest(m *store.Manifest) {
	m.PDFURL = a.baseURL + "/documents/manifests/" + m.ID + "/pdf/" + a.docs.sign(docManifestPDF, m.ID)
	m.CSVURL = a.baseURL + "/documents/manifests/" + m.ID + "/csv/" + a.docs.sign(docManifestCSV, m.ID)
}

// createManifest: POST /manifests {carrier, ship_date?} closes out the day: 201 with the
// manifest, 400 for a carrier the deployment does not have, or 422 nothing_to_manifest. A
// carrier deleted since its labels were bought is still known: its labels are still handed over.
func (a *API) createManifest(w http.ResponseWriter, r *http.Request) error {
	var req manifest.Request
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	carriers, err := a.carriers(r.Context())
	if err != nil {
		return err
	}
	known := func(code string) bool { _, ok := carriers.All[code]; return ok }
	if err := req.Validate(a.db.Now().UTC().Format(time.DateOnly), known); err != nil {
		return err
	}
	c := &closeOut{a: a}
	if _, _, err := manifest.Close(r.Context(), c, accountID(r), req.Carrier, req.ShipDate); err != nil {
		return err
	}
	m := c.stored
	a.linkManifest(&m)
	writeData(w, http.StatusCreated, m)
	return nil
}

// closeOut is the store's close-out (manifest.CloseOutStore) with the API's URLs in its
// MANIFEST_CREATED event; it keeps the manifest as stored, which is the answer.
type closeOut struct {
	a      *API
	stored store.Manifest
}

func (c *closeOut) CloseOut(ctx context.Context, accountID, carrier, shipDate string, fn func(manifest.Day) error) error {
	var err error
	c.stored, err = c.a.db.CloseOut(ctx, accountID, carrier, shipDate, c.a.linkManifest, fn)
	return err
}

// getManifest: GET /manifests/{id}.
func (a *API) getManifest(w http.ResponseWriter, r *http.Request) error {
	m, err := a.db.GetManifest(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	a.linkManifest(&m)
	writeData(w, http.StatusOK, m)
	return nil
}

// listManifests: GET /manifests?carrier=&ship_date=&page=&page_size=, newest first.
func (a *API) listManifests(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := store.ManifestFilter{Carrier: q.Get("carrier"), ShipDate: q.Get("ship_date")}
	if len(f.Carrier) > 64 {
		return invalidParameter("carrier", "carrier must be at most 64 characters")
	}
	if _, err := dateParam(q, "ship_date"); err != nil {
		return err
	}
	p, err := parsePage(q)
	if err != nil {
		return err
	}
	l, err := a.db.ListManifests(r.Context(), accountID(r), f, p)
	if err != nil {
		return err
	}
	for i := range l.Items {
		a.linkManifest(&l.Items[i])
	}
	writeList(w, l.Items, offsetMeta(p, l))
	return nil
}

// pendingManifests: GET /manifests/pending?page=&page_size=, per carrier and ship date, how many
// of the account's labels wait for a manifest, ordered by carrier, then ship date.
func (a *API) pendingManifests(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := a.db.PendingManifests(r.Context(), accountID(r), p)
	if err != nil {
		return err
	}
	writeList(w, l.Items, offsetMeta(p, l))
	return nil
}

// manifestPDFOf and manifestCSVOf serve a manifest's documents through their capability URLs:
// the signature vouches for the id, whose account is looked up.
func (a *API) manifestPDFOf(w http.ResponseWriter, r *http.Request, id string) error {
	return a.serveManifestDocument(w, r, id, store.ManifestPDF)
}

func (a *API) manifestCSVOf(w http.ResponseWriter, r *http.Request, id string) error {
	return a.serveManifestDocument(w, r, id, store.ManifestCSV)
}

// serveManifestDocument answers a manifest's stored PDF (shown inline) or CSV (saved as a
// file), cacheable for good: the bytes never change.
func (a *API) serveManifestDocument(w http.ResponseWriter, r *http.Request, id, kind string) error {
	acct, err := a.db.ManifestAccount(r.Context(), id)
	if err != nil {
		return err
	}
	d, err := a.db.GetManifestDocument(r.Context(), acct, id, kind)
	if err != nil {
		return err
	}
	doc := document{body: d.Body, etag: d.SHA256, immutable: true, modified: d.Manifest.CreatedAt.Time,
		filename: "manifest-" + d.Manifest.Carrier + "-" + d.Manifest.ShipDate + "-" + d.Manifest.ID + "." + kind}
	if kind == store.ManifestPDF {
		doc.contentType = "application/pdf"
	} else {
		doc.contentType, doc.attachment = "text/csv; charset=utf-8", true
	}
	serveDocument(w, r, doc)
	return nil
}
