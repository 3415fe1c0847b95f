package httpapi

import "net/http"

type ingestState struct{}

func (a *API) setupIngest() error { return nil }

func (a *API) listOrders(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getOrder(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getOrderImport(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }
func (a *API) orderImportHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeError(w, errNotImplemented) })
}
