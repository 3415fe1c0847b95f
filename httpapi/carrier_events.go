package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// Carrier pushes: POST /carrier_events/{carrier}, signed with the carrier's inbound
// secret like order import (X-Carrier-Signature, hex HMAC-SHA256 of the exact body keyed by the
// secret's text), carries 1 to 1,000 tracking events. Each goes through the operator feed's
// rules and use case (shipping.Tracking.Record, restricted to the carrier's labels), in its
// own transaction, and gets its own result: a bad event never rejects the others, and a push
// sent again changes nothing.

// CarrierSignatureHeader carries a push's signature.
const CarrierSignatureHeader = "X-Carrier-Signature"

// maxPushEvents bounds the events of one push, and so the work it asks for.
const maxPushEvents = 1000

// Results of one pushed event.
const (
	pushAccepted  = "ACCEPTED"
	pushDuplicate = "DUPLICATE"
	pushUnknown   = "UNKNOWN_TRACKING_CODE"
	pushInvalid   = "INVALID"
)

// errInvalidSignature is the one answer to an unknown carrier, a carrier without a secret, and a
// missing or wrong signature alike.
var errInvalidSignature = &Error{Status: http.StatusUnauthorized, Code: "invalid_signature",
	Message: "the carrier or the signature is not valid"}

type pushResult struct {
	Index   int    `json:"index"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

type pushAnswer struct {
	Accepted   int          `json:"accepted"`
	Duplicates int          `json:"duplicates"`
	Results    []pushResult `json:"results"`
}

// postCarrierEvents: POST /carrier_events/{carrier}.
func (a *API) postCarrierEvents(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	carrier := r.PathValue("carrier")
	if _, err := a.carriers(r.Context()); err != nil {
		return err
	}
	if _, ok := a.carrier(carrier); !ok {
		return errInvalidSignature
	}
	secret, err := a.db.CarrierEventSecret(r.Context(), carrier)
	if errors.Is(err, store.ErrNotFound) {
		return errInvalidSignature
	}
	if err != nil {
		return err
	}
	if !ingest.Verify(secret, body, r.Header.Get(CarrierSignatureHeader)) {
		return errInvalidSignature
	}
	if body == nil {
		return errEmptyBody
	}
	var req struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	switch {
	case req.Events == nil:
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "events", Code: "required", Message: "is required"}}}
	case len(req.Events) == 0 || len(req.Events) > maxPushEvents:
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "events", Code: "invalid",
			Message: "must hold 1 to " + strconv.Itoa(maxPushEvents) + " events"}}}
	}
	answer := pushAnswer{Results: make([]pushResult, len(req.Events))}
	for i, raw := range req.Events {
		res, err := a.pushEvent(r, carrier, raw)
		if err != nil {
			// The database failed: the push fails whole, and the carrier sends it again (the
			// events applied so far come back DUPLICATE).
			return err
		}
		res.Index = i
		switch res.Status {
		case pushAccepted:
			answer.Accepted++
		case pushDuplicate:
			answer.Duplicates++
		}
		answer.Results[i] = res
	}
	writeData(w, http.StatusOK, answer)
	return nil
}

// pushEvent applies one pushed event and says how it went; an error is a failure of the store.
func (a *API) pushEvent(r *http.Request, carrier string, raw json.RawMessage) (pushResult, error) {
	var req shipping.TrackingEventInput
	if err := decodeStrict(raw, &req); err != nil {
		return pushResult{Status: pushInvalid, Message: eventProblem(err)}, nil
	}
	e, err := req.Event("carrier", a.db.Now())
	if err != nil {
		return pushResult{Status: pushInvalid, Message: eventProblem(err)}, nil
	}
	_, created, err := a.labels.tracking.Record(r.Context(), carrier, req.TrackingCode, e)
	var ve *shipping.ValidationError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return pushResult{Status: pushUnknown, Message: "no " + carrier + " shipping label has this tracking code"}, nil
	case errors.Is(err, shipping.ErrInvalidState), errors.As(err, &ve):
		return pushResult{Status: pushInvalid, Message: eventProblem(err)}, nil
	case err != nil:
		return pushResult{}, err
	case created:
		return pushResult{Status: pushAccepted}, nil
	}
	return pushResult{Status: pushDuplicate}, nil
}

// eventProblem says what is wrong with one event, in one line.
func eventProblem(err error) string {
	var ve *shipping.ValidationError
	var e *Error
	switch {
	case errors.As(err, &ve):
		parts := make([]string, len(ve.Fields))
		for i, f := range ve.Fields {
			parts[i] = f.Field + " " + f.Message
		}
		return strings.Join(parts, "; ")
	case errors.As(err, &e):
		return e.Message
	}
	return err.Error()
}

// rotateCarrierEventSecret: POST /admin/carriers/{code}/event_secret/rotate gives a known
// carrier a new inbound secret; the old one stops working at once.
func (a *API) rotateCarrierEventSecret(w http.ResponseWriter, r *http.Request) error {
	if err := readOptionalEmpty(w, r); err != nil {
		return err
	}
	code := r.PathValue("code")
	if _, err := a.carriers(r.Context()); err != nil {
		return err
	}
	if _, ok := a.carrier(code); !ok {
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no carrier has code " + code}
	}
	secret, err := a.db.RotateCarrierEventSecret(r.Context(), code)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, struct {
		Carrier string `json:"carrier"`
		Secret  string `json:"secret"`
	}{code, secret})
	return nil
}
