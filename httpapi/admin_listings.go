package httpapi

import (
	"net/http"
	"slices"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// accountJSON is an account as the operator endpoints show it. The ingest secret is shown when
// the account is created and by GET /admin/accounts/{id} (as by `waybill account show`), never
// in the list.
type accountJSON struct {
	ID             string             `json:"id"`
	Name           string             `json:"name"`
	Brand          string             `json:"brand"`
	OrganizationID string             `json:"organization_id"`
	IngestSecret   string             `json:"ingest_secret,omitempty"`
	CreatedAt      shipping.Timestamp `json:"created_at"`
}

func accountView(a store.Account, withSecret bool) accountJSON {
	v := accountJSON{ID: a.ID, Name: a.Name, Brand: a.Brand, OrganizationID: a.OrganizationID, CreatedAt: a.CreatedAt}
	if withSecret {
		v.IngestSecret = a.IngestSecret
	}
	return v
}

// listAccounts: GET /admin/accounts, newest first, offset pagination.
func (a *API) listAccounts(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := a.db.ListAccounts(r.Context(), p)
	if err != nil {
		return err
	}
	views := make([]accountJSON, len(l.Items))
	for i, acct := range l.Items {
		views[i] = accountView(acct, false)
	}
	writeList(w, views, offsetMeta(p, l))
	return nil
}

// getAccount: GET /admin/accounts/{id}, with the ingest secret order import is signed with.
func (a *API) getAccount(w http.ResponseWriter, r *http.Request) error {
	acct, err := a.db.Account(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, accountView(acct, true))
	return nil
}

// tokenInfoJSON is a token as GET /admin/accounts/{id}/tokens lists it: never the bearer
// string.
type tokenInfoJSON struct {
	ID         string              `json:"id"`
	AccountID  string              `json:"account_id"`
	Scopes     []string            `json:"scopes"`
	CreatedAt  shipping.Timestamp  `json:"created_at"`
	LastUsedAt *shipping.Timestamp `json:"last_used_at"`
	RevokedAt  *shipping.Timestamp `json:"revoked_at"`
}

// listTokens: GET /admin/accounts/{id}/tokens, newest first, revoked ones included; never
// the bearer string.
func (a *API) listTokens(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := a.db.ListTokens(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	views := make([]tokenInfoJSON, len(l.Items))
	for i, t := range l.Items {
		views[i] = tokenInfoJSON(t)
	}
	writeList(w, views, offsetMeta(p, l))
	return nil
}

// importStatuses are the values of GET /order_imports?status=.
var importStatuses = []string{ingest.StatusQueued, ingest.StatusProcessing, ingest.StatusProcessed, ingest.StatusFailed}

// listOrderImports: GET /order_imports[?status=…], newest first, offset pagination.
func (a *API) listOrderImports(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		return err
	}
	status := q.Get("status")
	if status != "" && !slices.Contains(importStatuses, status) {
		return invalidParameter("status", "status must be one of QUEUED, PROCESSING, PROCESSED, FAILED")
	}
	l, err := a.db.ListOrderImports(r.Context(), accountID(r), status, p)
	if err != nil {
		return err
	}
	views := make([]orderImportView, len(l.Items))
	for i, imp := range l.Items {
		views[i] = newOrderImportView(imp)
	}
	writeList(w, views, offsetMeta(p, l))
	return nil
}

func newOrderImportView(imp ingest.Import) orderImportView {
	v := orderImportView{ID: imp.ID, OrderID: imp.OrderID, Status: imp.Status, Errors: imp.Errors,
		Attempts: imp.Attempts, ReceivedAt: shipping.FormatTime(imp.ReceivedAt)}
	if imp.ProcessedAt != nil {
		s := shipping.FormatTime(*imp.ProcessedAt)
		v.ProcessedAt = &s
	}
	return v
}
