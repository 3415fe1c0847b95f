package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/labeldoc"
	"github.com/waybill/waybill/store"
)

// labelState is the labels side of the API. Labels need no state of their own beyond the
// store and the carriers (shippingState); the documents are drawn on demand.
type labelState struct {
	// buyer buys and voids labels, calling carriers outside any transaction; voids voids the
	// labels carriers sold that could not be recorded.
	buyer *shipping.Buyer
	voids *shipping.VoidWorker
	// tracking records tracking events from every source, billing the labels they finish.
	tracking shipping.Tracking[billing.Ledger]
}

func (a *API) setupLabels() error {
	a.labels = &labelState{tracking: shipping.Tracking[billing.Ledger]{Store: a.db, Bill: billing.BillFinishedLabel}}
	a.labels.buyer = &shipping.Buyer{Store: a.db, Carrier: a.ship.carriers.Find, Serials: a.db.Serials(), Now: a.now,
		Timeout: a.cfg.CarrierTimeout, Log: a.log}
	a.labels.voids = &shipping.VoidWorker{Queue: a.db, Buyer: a.labels.buyer, Now: a.now, Log: a.workerLog("label_voider")}
	// An Idempotency-Key replays its answer for at least a day.
	keys := &shipping.KeyPruner{Store: a.db, Retention: 24 * time.Hour, Every: time.Hour, Now: a.now,
		Log: a.workerLog("idempotency_key_pruner")}
	recovery := &shipping.PurchaseRecovery{Store: a.db, Buyer: a.labels.buyer, Every: time.Minute, Now: a.now,
		Log: a.workerLog("purchase_recovery")}
	a.workers = append(a.workers,
		worker{name: "purchase_recovery", run: func(ctx context.Context) error { recovery.Run(ctx); return nil }, drain: recovery.Drain},
		worker{name: "idempotency_key_pruner", run: func(ctx context.Context) error { keys.Run(ctx); return nil }, drain: keys.Drain},
		worker{name: "label_voider", run: func(ctx context.Context) error { a.labels.voids.Run(ctx); return nil },
			drain: a.labels.voids.Drain})
	return nil
}

// buyRate: POST /shipments/{id}/rates/{rate_id}, body optional {"inline_label": bool,
// "insurance_amount": USD}, or the same as query parameters; Idempotency-Key header optional.
// Answers 200 with the purchased shipment (the shipment is not created here, so not 201); a
// replay carries Idempotent-Replayed: true.
func (a *API) buyRate(w http.ResponseWriter, r *http.Request) error {
	inline, err := boolParam(r, "inline_label")
	if err != nil {
		return err
	}
	var insurance *float64
	if q := r.URL.Query(); q.Has("insurance_amount") {
		f, err := strconv.ParseFloat(q.Get("insurance_amount"), 64)
		if err != nil {
			return invalidParameter("insurance_amount", "insurance_amount must be a number of US dollars")
		}
		var ve *shipping.ValidationError
		if _, err := shipping.InsuredCents(f); errors.As(err, &ve) {
			return invalidParameter("insurance_amount", "insurance_amount "+ve.Fields[0].Message)
		}
		insurance = &f
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	if body != nil {
		var req struct {
			InlineLabel     *bool    `json:"inline_label"`
			InsuranceAmount *float64 `json:"insurance_amount"`
		}
		if err := decodeStrict(body, &req); err != nil {
			return err
		}
		if req.InlineLabel != nil {
			inline = inline || *req.InlineLabel
		}
		if req.InsuranceAmount != nil {
			if insurance != nil && *insurance != *req.InsuranceAmount {
				return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "insurance_amount", Code: "conflict",
					Message: "the query parameter and the body give different amounts"}}}
			}
			insurance = req.InsuranceAmount
		}
	}
	var insuredCents int64
	if insurance != nil {
		if insuredCents, err = shipping.InsuredCents(*insurance); err != nil {
			return err
		}
	}
	key := r.Header.Get("Idempotency-Key")
	if r.Header.Values("Idempotency-Key") != nil && !shipping.ValidIdempotencyKey(key) {
		return invalidParameter("Idempotency-Key", "Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	s, rendered, replayed, err := a.buy(r.Context(), accountID(r), r.PathValue("id"), r.PathValue("rate_id"), insuredCents, inline, key)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if rendered != "" {
		a.writeStoredData(w, http.StatusOK, rendered)
		return nil
	}
	writeData(w, http.StatusOK, s)
	return nil
}

// boolParam reads an optional true/false query parameter.
func boolParam(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, invalidParameter(name, name+" must be true or false")
	}
	return v, nil
}

// buy buys rateID for the shipment (the buy endpoint, POST /shipments with buy_cheapest_rate, a
// batch item) and returns the purchased shipment, its stored rendering when that is the answer
// (not for a replay, nor with the label document inlined: then the shipment is, with every
// quote), and whether the answer is an idempotent replay. idempotencyKey may be empty.
func (a *API) buy(ctx context.Context, accountID, shipmentID, rateID string, insuredCents int64, inlineLabel bool, idempotencyKey string) (*shipping.Shipment, string, bool, error) {
	// With the label document inlined the answer is the shipment itself, with every quote.
	req := shipping.BuyRequest{AccountID: accountID, ShipmentID: shipmentID, RateID: rateID, InsuredCents: insuredCents,
		WholeShipment: inlineLabel}
	bought, err := a.labels.buyer.Buy(ctx, req.Keyed(idempotencyKey, inlineLabel))
	if err != nil {
		return nil, "", false, err
	}
	s, rendered := bought.Shipment, bought.Rendered
	a.linkShipments(s)
	if inlineLabel && s.ShippingLabel != nil {
		doc, _, err := a.labelDocument(s, s.ShippingLabel).Render(s.ShippingLabel.LabelFormat)
		if err != nil {
			return nil, "", false, err
		}
		s.ShippingLabel.LabelFile = base64.StdEncoding.EncodeToString(doc)
		rendered = ""
	}
	return s, rendered, bought.Replayed, nil
}

// linkShipments sets label_url on the shipments' labels: URLs are the API's, so the store
// leaves them empty.
func (a *API) linkShipments(ss ...*shipping.Shipment) {
	for _, s := range ss {
		if s != nil {
			a.linkLabels(s.ShippingLabel)
		}
	}
}

// linkLabels sets label_url, the label's capability URL, on labels, and an international
// label's commercial_invoice_url.
func (a *API) linkLabels(ls ...*shipping.Label) {
	for _, l := range ls {
		if l != nil {
			l.LabelURL = a.labelURL(l.ID)
			l.CommercialInvoiceURL = nil
			if l.CommercialInvoice {
				u := a.commercialInvoiceURL(l.ID)
				l.CommercialInvoiceURL = &u
			}
		}
	}
}

// appendLinked appends a stored response to b with its marked label_urls and
// commercial_invoice_urls replaced by the labels' URLs. The mark starts with a JSON escape, and
// escapes are rare in a rendering, so the scan looks for backslashes, not for the whole mark.
func (a *API) appendLinked(b []byte, s string) []byte {
	const labelKey, invoiceKey = `"label_url":"`, `"commercial_invoice_url":"`
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\\')
		if j < 0 {
			break
		}
		j += i
		var url func(id string) string
		switch {
		case !strings.HasPrefix(s[j:], `\u0000`):
		case strings.HasSuffix(s[:j], labelKey):
			url = a.labelURL
		case strings.HasSuffix(s[:j], invoiceKey):
			url = a.commercialInvoiceURL
		}
		if url == nil {
			i = j + 2 // past the escape and the character it escapes
			continue
		}
		start := j + len(`\u0000`)
		end := strings.IndexByte(s[start:], '"')
		if end < 0 {
			break
		}
		b = append(b, s[:j-1]...)
		b = appendJSONString(b, url(s[start:start+end]))
		s, i = s[start+end+1:], 0
	}
	return append(b, s...)
}

// appendJSONString appends s as encoding/json writes it: quoted as is when it holds only
// printable ASCII that JSON neither escapes nor HTML-escapes (a URL, usually).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// cancelShipment: PUT /shipments/{id}/cancel, no body required. Cancelling a CANCELLED
// shipment answers 200 again.
func (a *API) cancelShipment(w http.ResponseWriter, r *http.Request) error {
	if err := readOptionalEmpty(w, r); err != nil {
		return err
	}
	s, err := a.labels.buyer.CancelShipment(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	a.linkShipments(s)
	writeData(w, http.StatusOK, s)
	return nil
}

// readOptionalEmpty is the body check of a route that takes no body (cancel, redeliver, rotate,
// the invoice actions, DELETE): it accepts no body or an empty JSON object; anything else is
// answered by the API's body rules (415, 413, malformed_json, unknown_field).
func readOptionalEmpty(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r)
	if err != nil || body == nil {
		return err
	}
	return decodeStrict(body, &struct{}{})
}

// listLabels: GET /shipping_labels?status=&tracking_code=&page=&page_size=, newest first.
func (a *API) listLabels(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := store.LabelFilter{Status: q.Get("status"), TrackingCode: q.Get("tracking_code")}
	if f.Status != "" && !shipping.ValidLabelStatus(f.Status) {
		return invalidParameter("status", "status must be one of "+strings.Join(shipping.LabelStatuses, ", "))
	}
	if len(f.TrackingCode) > 64 {
		return invalidParameter("tracking_code", "tracking_code must be at most 64 characters")
	}
	p, err := parsePage(q)
	if err != nil {
		return err
	}
	l, err := a.db.ListLabels(r.Context(), accountID(r), f, p)
	if err != nil {
		return err
	}
	a.linkLabels(l.Items...)
	writeList(w, l.Items, offsetMeta(p, l))
	return nil
}

// getLabel: GET /shipping_labels/{id}.
func (a *API) getLabel(w http.ResponseWriter, r *http.Request) error {
	body, err := a.db.LabelJSON(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	a.writeStoredData(w, http.StatusOK, body)
	return nil
}

// getLabelDocument: GET /shipping_labels/{id}/label — the PDF, ZPL or PNG document, drawn from
// the stored label and shipment each time (the same data always gives the same bytes).
func (a *API) getLabelDocument(w http.ResponseWriter, r *http.Request) error {
	return a.serveLabelDocument(w, r, accountID(r), r.PathValue("id"))
}

// labelDocumentOf serves a label's document through its capability URL (label_url): the
// signature vouches for the id, whose account is looked up.
func (a *API) labelDocumentOf(w http.ResponseWriter, r *http.Request, id string) error {
	acct, err := a.db.LabelAccount(r.Context(), id)
	if err != nil {
		return err
	}
	return a.serveLabelDocument(w, r, acct, id)
}

// labelDocument is what the label l of shipment s shows, printed as its carrier prints it (its
// card's names, its tracking scheme's barcode).
func (a *API) labelDocument(s *shipping.Shipment, l *shipping.Label) labeldoc.Document {
	c, _ := a.carrier(l.Carrier)
	return labeldoc.For(s, l, c)
}

// serveLabelDocument answers a label's document in its format. A label's document changes when
// the label is voided or the shipment's reference edited, so caches revalidate it by its ETag.
func (a *API) serveLabelDocument(w http.ResponseWriter, r *http.Request, accountID, labelID string) error {
	l, s, err := a.db.LabelDocument(r.Context(), accountID, labelID)
	if err != nil {
		return err
	}
	body, contentType, err := a.labelDocument(s, l).Render(l.LabelFormat)
	if err != nil {
		return err
	}
	doc := document{body: body, contentType: contentType}
	// PDF and PNG open in a browser; ZPL is for a printer, so it is saved as a file.
	doc.filename = "label-" + l.TrackingCode + labeldoc.FileExtension(l.LabelFormat)
	doc.attachment = l.LabelFormat == shipping.LabelFormatZPL
	serveDocument(w, r, doc)
	return nil
}

// docCommercialInvoice is the kind of an international label's commercial invoice URL.
const docCommercialInvoice = "commercial_invoice"

// commercialInvoiceURL is the capability URL of an international label's commercial invoice
// (commercial_invoice_url).
func (a *API) commercialInvoiceURL(labelID string) string {
	return a.baseURL + "/documents/commercial_invoices/" + labelID + "/" + a.docs.sign(docCommercialInvoice, labelID)
}

// commercialInvoiceOf serves an international label's commercial invoice, a US Letter PDF,
// through its capability URL: drawn from the stored label and shipment each time, as the label
// is. A domestic label has none (not_found).
func (a *API) commercialInvoiceOf(w http.ResponseWriter, r *http.Request, id string) error {
	acct, err := a.db.LabelAccount(r.Context(), id)
	if err != nil {
		return err
	}
	l, s, err := a.db.LabelDocument(r.Context(), acct, id)
	if err != nil {
		return err
	}
	c, _ := a.carrier(l.Carrier)
	doc, ok := labeldoc.CustomsFor(s, l, c)
	if !ok {
		return store.ErrNotFound
	}
	body := doc.InvoicePDF()
	serveDocument(w, r, document{body: body, contentType: labeldoc.ContentTypePDF,
		filename: "commercial-invoice-" + l.TrackingCode + ".pdf"})
	return nil
}

// listTrackingEvents: GET /shipping_labels/{id}/tracking_events, oldest first.
func (a *API) listTrackingEvents(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := a.db.ListTrackingEvents(r.Context(), accountID(r), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	writeList(w, l.Items, offsetMeta(p, l))
	return nil
}

// postTrackingEvent: POST /admin/tracking_events, the operator feed of the built-in carriers.
// A new event answers 201; an event already recorded (same label, occurred_at, status and
// message) answers 200 with the recorded one and changes nothing.
func (a *API) postTrackingEvent(w http.ResponseWriter, r *http.Request) error {
	var req shipping.TrackingEventInput
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	e, err := req.Event("admin", a.db.Now())
	if err != nil {
		return err
	}
	ev, created, err := a.labels.tracking.Record(r.Context(), "", req.TrackingCode, e)
	if errors.Is(err, store.ErrNotFound) {
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no shipping label has tracking code " + req.TrackingCode}
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeData(w, status, ev)
	return nil
}
