package httpapi

import "net/http"

type labelState struct{}

func (a *API) setupLabels() error { return nil }

func (a *API) buyRate(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) cancelShipment(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) listLabels(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getLabel(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getLabelDocument(w http.ResponseWriter, r *http.Request) error {
	return errNotImplemented
}

func (a *API) listTrackingEvents(w http.ResponseWriter, r *http.Request) error {
	return errNotImplemented
}

func (a *API) postTrackingEvent(w http.ResponseWriter, r *http.Request) error {
	return errNotImplemented
}
