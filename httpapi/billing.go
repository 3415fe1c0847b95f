package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// inlineLineItems is how many line items GET /billing/invoices/{id} carries.
const inlineLineItems = 250

// billingState holds the billing use cases the handlers call.
type billingState struct {
	service *billing.Service
	// closer finalizes the invoices whose period has ended.
	closer *billing.Closer
}

// setupBilling builds the billing service, which draws invoice documents with the configured
// issuer, and registers the period closer.
func (a *API) setupBilling() error {
	s := &billing.Service{Books: a.db, Now: func() time.Time { return a.db.Now() },
		Render: billing.Renderer{Issuer: a.cfg.Issuer, ServiceName: a.serviceName}}
	c := &billing.Closer{Service: s, Log: a.workerLog("billing_closer")}
	a.billing = &billingState{service: s, closer: c}
	a.workers = append(a.workers, worker{name: "billing_closer", run: c.Run, drain: c.Drain})
	return nil
}

// invoiceJSON is an invoice as the API shows it.
type invoiceJSON struct {
	ID                string             `json:"id"`
	Status            billing.Status     `json:"status"`
	Currency          string             `json:"currency"`
	InvoiceNumber     string             `json:"invoice_number"`
	PeriodStart       string             `json:"period_start"`
	PeriodEnd         string             `json:"period_end"`
	TotalCents        int64              `json:"total_cents"`
	DeferredCents     int64              `json:"deferred_cents"`
	InvoiceDate       *string            `json:"invoice_date"`
	DueDate           *string            `json:"due_date"`
	PDFURL            *string            `json:"pdf_url"`
	CSVURL            *string            `json:"csv_url"`
	StatusTransitions statusTransitions  `json:"status_transitions"`
	CreatedAt         shipping.Timestamp `json:"created_at"`
	UpdatedAt         shipping.Timestamp `json:"updated_at"`
}

// statusTransitions says when the invoice made each move (Stripe's status_transitions).
type statusTransitions struct {
	FinalizedAt           *shipping.Timestamp `json:"finalized_at"`
	PaidAt                *shipping.Timestamp `json:"paid_at"`
	MarkedUncollectibleAt *shipping.Timestamp `json:"marked_uncollectible_at"`
	VoidedAt              *shipping.Timestamp `json:"voided_at"`
}

// invoiceWithItems is the single-invoice answer: the invoice and its first line items.
type invoiceWithItems struct {
	invoiceJSON
	LineItems            []billing.LineItem `json:"line_items"`
	LineItemsHasNextPage bool               `json:"line_items_has_next_page"`
}

func (a *API) invoiceJSON(inv billing.Invoice) invoiceJSON {
	j := invoiceJSON{ID: inv.ID, Status: inv.Status, Currency: inv.Currency, InvoiceNumber: inv.Number,
		PeriodStart: inv.PeriodStart, PeriodEnd: inv.PeriodEnd, TotalCents: inv.TotalCents, DeferredCents: inv.DeferredCents,
		StatusTransitions: statusTransitions{shipping.Stamp(inv.FinalizedAt), shipping.Stamp(inv.PaidAt),
			shipping.Stamp(inv.MarkedUncollectibleAt), shipping.Stamp(inv.VoidedAt)},
		CreatedAt: shipping.Timestamp{Time: inv.CreatedAt}, UpdatedAt: shipping.Timestamp{Time: inv.UpdatedAt}}
	if inv.InvoiceDate != "" {
		j.InvoiceDate, j.DueDate = &inv.InvoiceDate, &inv.DueDate
	}
	// Documents exist once the invoice is finalized; a client fetches them only when non-null.
	if inv.Status != billing.Draft {
		pdf, csv := a.invoiceURLs(inv.ID)
		j.PDFURL, j.CSVURL = &pdf, &csv
	}
	return j
}

// listInvoices: GET /billing/invoices?status=&search=&page=&page_size=, newest period first.
// search matches invoice numbers containing the text, ignoring case.
func (a *API) listInvoices(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		return err
	}
	var f store.InvoiceFilter
	if s := q.Get("status"); s != "" {
		st, ok := billing.ParseStatus(s)
		if !ok {
			return invalidParameter("status", "status must be one of DRAFT, OPEN, PAID, UNCOLLECTIBLE, VOID")
		}
		f.Status = st
	}
	if f.Search = q.Get("search"); len(f.Search) > 100 {
		return invalidParameter("search", "search must be at most 100 characters")
	}
	l, err := a.db.Invoices(r.Context(), accountID(r), f, p)
	if err != nil {
		return err
	}
	out := make([]invoiceJSON, len(l.Items))
	for i, inv := range l.Items {
		out[i] = a.invoiceJSON(inv)
	}
	writeList(w, out, offsetMeta(p, l))
	return nil
}

// getInvoice: GET /billing/invoices/{id} with its first 250 live line items, oldest first.
func (a *API) getInvoice(w http.ResponseWriter, r *http.Request) error {
	inv, _, items, more, err := a.db.InvoiceWithItems(r.Context(), accountID(r), r.PathValue("id"), inlineLineItems)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, invoiceWithItems{a.invoiceJSON(inv), items, more})
	return nil
}

// listLineItems: GET /billing/invoices/{id}/line_items, oldest first; soft-deleted items are
// neither listed nor counted.
func (a *API) listLineItems(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := a.db.LineItems(r.Context(), accountID(r), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	writeList(w, l.Items, offsetMeta(p, l))
	return nil
}

// getInvoicePDF: GET /billing/invoices/{id}/pdf, the PDF stored when the invoice was finalized.
// A DRAFT invoice has no documents yet: invalid_state (its pdf_url and csv_url are null).
func (a *API) getInvoicePDF(w http.ResponseWriter, r *http.Request) error {
	return a.serveInvoiceDocument(w, r, accountID(r), r.PathValue("id"), billing.DocumentPDF)
}

// getInvoiceCSV: GET /billing/invoices/{id}/csv, the CSV stored when the invoice was finalized.
func (a *API) getInvoiceCSV(w http.ResponseWriter, r *http.Request) error {
	return a.serveInvoiceDocument(w, r, accountID(r), r.PathValue("id"), billing.DocumentCSV)
}

// invoicePDFOf and invoiceCSVOf serve an invoice's documents through their capability URLs: the
// signature vouches for the id, whose account is looked up.
func (a *API) invoicePDFOf(w http.ResponseWriter, r *http.Request, id string) error {
	return a.invoiceDocumentOf(w, r, id, billing.DocumentPDF)
}

func (a *API) invoiceCSVOf(w http.ResponseWriter, r *http.Request, id string) error {
	return a.invoiceDocumentOf(w, r, id, billing.DocumentCSV)
}

func (a *API) invoiceDocumentOf(w http.ResponseWriter, r *http.Request, id, kind string) error {
	acct, err := a.db.InvoiceAccount(r.Context(), id)
	if err != nil {
		return err
	}
	return a.serveInvoiceDocument(w, r, acct, id, kind)
}

// serveInvoiceDocument answers a finalized invoice's stored PDF (shown inline) or CSV (saved as
// a file). The bytes never change, so they are cacheable for good.
func (a *API) serveInvoiceDocument(w http.ResponseWriter, r *http.Request, accountID, invoiceID, kind string) error {
	d, err := a.billing.service.Document(r.Context(), accountID, invoiceID, kind)
	if err != nil {
		return err
	}
	doc := document{body: d.Body, etag: d.SHA256, immutable: true, filename: d.Invoice.Number + "." + kind}
	if d.Invoice.FinalizedAt != nil {
		doc.modified = *d.Invoice.FinalizedAt
	}
	if kind == billing.DocumentPDF {
		doc.contentType = "application/pdf"
	} else {
		doc.contentType, doc.attachment = "text/csv; charset=utf-8", true
	}
	serveDocument(w, r, doc)
	return nil
}

// openDraftInvoice: POST /admin/billing/invoices {account_id} returns the account's DRAFT
// invoice that charges made now land on: 201 when it had to be created, 200 when it existed.
// (Invoices are otherwise created when the first charge of a period arrives.)
func (a *API) openDraftInvoice(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		AccountID string `json:"account_id"`
	}
	if err := readJSON(w, r, &body); err != nil {
		return err
	}
	switch {
	case body.AccountID == "":
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "account_id", Code: "required", Message: "is required"}}}
	case !uuidText.MatchString(body.AccountID):
		// Account ids are UUIDs (openapi.json: format uuid); another string is a mistake,
		// not an unknown account.
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "account_id", Code: "invalid", Message: "must be an account id (a UUID)"}}}
	}
	inv, created, err := a.billing.service.OpenDraft(r.Context(), body.AccountID)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeData(w, status, a.invoiceJSON(inv))
	return nil
}

// addInvoiceFee: POST /admin/billing/invoices/{id}/line_items {description, amount_cents} adds
// a FEE line item to a DRAFT invoice (422 otherwise). A negative amount is a credit.
func (a *API) addInvoiceFee(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Description string `json:"description"`
		AmountCents *int64 `json:"amount_cents"`
	}
	if err := readJSON(w, r, &body); err != nil {
		return err
	}
	if body.AmountCents == nil {
		var v shipping.ValidationError
		if err := billing.ValidateFee(body.Description, 1); err != nil {
			v = *err.(*shipping.ValidationError)
		}
		v.Add("amount_cents", "required", "is required")
		return &v
	}
	if err := billing.ValidateFee(body.Description, *body.AmountCents); err != nil {
		return err
	}
	acct, err := a.db.InvoiceAccount(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	it, err := a.billing.service.AddFee(r.Context(), acct, r.PathValue("id"), body.Description, *body.AmountCents)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, it)
	return nil
}

// deleteLineItem: DELETE /admin/billing/line_items/{id} soft-deletes a line item of a DRAFT
// invoice (422 otherwise); a deleted item is 404.
func (a *API) deleteLineItem(w http.ResponseWriter, r *http.Request) error {
	if err := readOptionalEmpty(w, r); err != nil {
		return err
	}
	acct, err := a.db.LineItemAccount(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := a.billing.service.DeleteLineItem(r.Context(), acct, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// invoiceAction: POST /admin/billing/invoices/{id}/{finalize|pay|mark_uncollectible|void}.
// billing.Next decides which moves are legal; any other is 422 invalid_state.
func (a *API) invoiceAction(action string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := readOptionalEmpty(w, r); err != nil {
			return err
		}
		acct, err := a.db.InvoiceAccount(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		inv, err := a.billing.service.Transition(r.Context(), acct, r.PathValue("id"), billing.Action(action))
		if err != nil {
			return err
		}
		writeData(w, http.StatusOK, a.invoiceJSON(inv))
		return nil
	}
}

// serviceName is a carrier service's human name, when the carrier can tell it.
func (a *API) serviceName(carrier, service string) string {
	c, ok := a.carrier(carrier)
	if !ok {
		return ""
	}
	if n, ok := c.(interface {
		ServiceName(code string) (string, bool)
	}); ok {
		name, _ := n.ServiceName(service)
		return name
	}
	return ""
}

// billingProfileJSON is an account's billing profile as the ADMIN endpoints show it.
type billingProfileJSON struct {
	AccountID     string           `json:"account_id"`
	Currency      string           `json:"currency"`
	Period        billing.Period   `json:"period"`
	NetTermsDays  int              `json:"net_terms_days"`
	BillToName    *string          `json:"bill_to_name"`
	BillToAddress *billing.Address `json:"bill_to_address"`
}

func profileJSON(p billing.Profile) billingProfileJSON {
	j := billingProfileJSON{AccountID: p.AccountID, Currency: p.Currency, Period: p.Period, NetTermsDays: p.NetTermsDays,
		BillToAddress: p.BillToAddress}
	if p.BillToName != "" {
		j.BillToName = &p.BillToName
	}
	return j
}

// getBillingProfile: GET /admin/accounts/{id}/billing_profile.
func (a *API) getBillingProfile(w http.ResponseWriter, r *http.Request) error {
	p, err := a.db.BillingProfile(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, profileJSON(p))
	return nil
}

// updateBillingProfile: PATCH /admin/accounts/{id}/billing_profile {period, bill_to_name,
// bill_to_address}, each optional; null clears a bill-to field. Invoice periods never overlap,
// so the period can change only before the account's first invoice (invalid_state after).
// Invoices already finalized keep the bill-to they were issued with.
func (a *API) updateBillingProfile(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	var req struct {
		Period        *billing.Period  `json:"period"`
		BillToName    *string          `json:"bill_to_name" nullable:"true"`
		BillToAddress *billing.Address `json:"bill_to_address" nullable:"true"`
	}
	if body == nil {
		body = []byte("{}")
	}
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	// Which fields were sent at all: a field sent as null is cleared, an absent one kept.
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(body, &sent); err != nil {
		return err
	}
	if _, ok := sent["period"]; ok && (req.Period == nil || !req.Period.Valid()) {
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "period", Code: "invalid", Message: "must be MONTHLY or WEEKLY"}}}
	}
	p, err := a.billing.service.UpdateProfile(r.Context(), r.PathValue("id"), func(p *billing.Profile) {
		if req.Period != nil {
			p.Period = *req.Period
		}
		if _, ok := sent["bill_to_name"]; ok {
			p.BillToName = ""
			if req.BillToName != nil {
				p.BillToName = *req.BillToName
			}
		}
		if _, ok := sent["bill_to_address"]; ok {
			p.BillToAddress = req.BillToAddress
		}
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, profileJSON(p))
	return nil
}
