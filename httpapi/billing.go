package httpapi

import "net/http"

type billingState struct{}

func (a *API) setupBilling() error { return nil }

func (a *API) listInvoices(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getInvoice(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) listLineItems(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getInvoicePDF(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getInvoiceCSV(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) addInvoiceFee(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) deleteLineItem(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }
func (a *API) invoiceAction(action string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }
}
