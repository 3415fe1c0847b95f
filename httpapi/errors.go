package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/shipping/manifest"
	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/webhook"
)

// Error is an API error answer: {"errors": {status, code, message, …}}.
type Error struct {
	Status        int                   `json:"-"`
	Code          string                `json:"code"`
	Message       string                `json:"message"`
	RequiredScope string                `json:"required_scope,omitempty"`
	Parameter     string                `json:"parameter,omitempty"`
	Fields        []shipping.FieldError `json:"fields,omitempty"`
	// Reasons is set (an empty array if no carrier was asked) on every rate shopping failure
	// and only there.
	Reasons *[]shipping.Reason `json:"reasons,omitempty"`
	// ShipmentIDs are the shipments whose labels ship an order (order_already_shipped).
	ShipmentIDs []string `json:"shipment_ids,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// errNotFound is the answer for an unknown id and for another account's id alike.
var errNotFound = &Error{Status: http.StatusNotFound, Code: "not_found", Message: "not found"}

// errDatabaseUnavailable is the answer while the database cannot take writes (its file
// vanished): a 503, so clients retry later and nothing is acknowledged that would be lost.
var errDatabaseUnavailable = &Error{Status: http.StatusServiceUnavailable, Code: "database_unavailable", Message: "the database is unavailable"}

// invalidParameter reports a bad query parameter.
func invalidParameter(name, message string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "invalid_parameter", Parameter: name, Message: message}
}

// errorFor maps any error to its answer: this is the one place domain errors meet HTTP. As the
// real product documents it, a body that fails validation is 400 and a business rule that
// refuses the request (rate shopping, state, a reused idempotency key) is 422; 409 is not used.
func errorFor(err error) *Error {
	var e *Error
	var ve *shipping.ValidationError
	var re *shipping.RateError
	var oe *carrier.TrackingOverlapError
	var shipped *shipping.OrderShippedError
	var ce *shipping.CarrierError
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &ve):
		return &Error{Status: http.StatusBadRequest, Code: "validation_failed", Message: "the request failed validation", Fields: ve.Fields}
	case errors.As(err, &re):
		reasons := re.Reasons
		if reasons == nil {
			reasons = []shipping.Reason{}
		}
		return &Error{Status: http.StatusUnprocessableEntity, Code: re.Code, Message: re.Message, Reasons: &reasons}
	case errors.As(err, &ce):
		// The carrier's own words go to the log only.
		return &Error{Status: http.StatusBadGateway, Code: "carrier_error",
			Message: "carrier " + ce.Carrier + " could not " + ce.Action + " the label; try again later"}
	case errors.Is(err, shipping.ErrMalformedItem):
		return &Error{Status: http.StatusBadRequest, Code: "malformed_json", Message: "the item does not decode"}
	case errors.Is(err, shipping.ErrItemInterrupted):
		return &Error{Status: http.StatusInternalServerError, Code: "too_many_attempts",
			Message: "processing the item was interrupted too many times"}
	case errors.Is(err, shipping.ErrPurchaseUnresolved):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "purchase_unresolved", Message: err.Error()}
	case errors.Is(err, shipping.ErrIdempotencyKeyReused):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused",
			Message: "this Idempotency-Key was already used for a different request"}
	case errors.Is(err, store.ErrUnavailable):
		return errDatabaseUnavailable
	case errors.Is(err, store.ErrNotFound):
		return errNotFound
	case errors.Is(err, store.ErrCarrierInUse):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "carrier_in_use", Message: "a rate shopping profile names the carrier; remove it from every profile first"}
	case errors.As(err, &shipped):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "order_already_shipped", Message: err.Error(),
			ShipmentIDs: shipped.ShipmentIDs}
	case errors.Is(err, shipping.ErrTrackingNumbersExhausted):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "tracking_numbers_exhausted", Message: err.Error()}
	case errors.As(err, &oe):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "tracking_range_overlap", Message: oe.Summary(), Fields: oe.Fields}
	case errors.Is(err, shipping.ErrTrackingNumberTaken):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "tracking_number_taken",
			Message: "the tracking number the carrier issued is already another label's; nothing was bought, try again"}
	case errors.Is(err, manifest.ErrNothingToManifest):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "nothing_to_manifest", Message: err.Error()}
	case errors.Is(err, shipping.ErrLabelManifested):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "label_manifested", Message: err.Error()}
	case errors.Is(err, shipping.ErrInvalidState), errors.Is(err, billing.ErrInvalidState), errors.Is(err, webhook.ErrInactive):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_state", Message: err.Error()}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal_error", Message: "internal error"}
}

// statusClientClosedRequest is the status a request is logged and counted with when its client
// went away before the answer was ready (nginx's 499): the server did not fail, and no answer
// reaches anyone.
const statusClientClosedRequest = 499

// fail answers with err's mapping; errors that map to 500 are logged, never shown. A request
// whose client went away is answered 499 without a body, whatever its error, which is most
// likely the canceled context's: its client is not there to read it.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := errorFor(err)
	if e.Status >= 500 && clientGone(r) {
		a.log.Debug("request abandoned by its client", "method", r.Method, "path", loggedPath(r), "err", err)
		w.WriteHeader(statusClientClosedRequest)
		return
	}
	if e.Status >= 500 {
		a.log.Error("request failed", "method", r.Method, "path", loggedPath(r), "err", err)
	}
	writeError(w, e)
}

// clientGone reports whether r's client went away: net/http cancels a request's context when
// its connection closes (or its HTTP/2 stream is reset). A deadline the server set ends a
// context with context.DeadlineExceeded instead, and is the server's failure.
func clientGone(r *http.Request) bool { return errors.Is(r.Context().Err(), context.Canceled) }

func writeError(w http.ResponseWriter, e *Error) {
	writeJSON(w, e.Status, struct {
		Errors errorObject `json:"errors"`
	}{errorShape(e)})
}

// errorObject is an error as an answer's "errors" object shows it; a batch item's
// errors are the same object.
type errorObject struct {
	Status string `json:"status"`
	*Error
}

func errorShape(e *Error) errorObject {
	return errorObject{Status: http.StatusText(e.Status), Error: e}
}
