package httpapi

import (
	"context"
	"net/http"

	"github.com/waybill/waybill/shipping"
)

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

// purchaseRate buys rateID for the shipment (the buy endpoint, and POST /shipments with
// buy_cheapest_rate) and returns the purchased shipment. idempotencyKey may be empty.
// (Filled in by the labels work.)
func (a *API) purchaseRate(ctx context.Context, accountID, shipmentID, rateID string, inlineLabel bool, idempotencyKey string) (*shipping.Shipment, error) {
	return nil, errNotImplemented
}
