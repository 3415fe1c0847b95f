package httpapi

import "net/http"

type shippingState struct{}

func (a *API) setupShipping() error { return nil }

func (a *API) createShipment(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) listShipments(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getShipment(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) updateShipment(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) listProfiles(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) getProfile(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }

func (a *API) putProfile(w http.ResponseWriter, r *http.Request) error { return errNotImplemented }
