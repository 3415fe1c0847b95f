package shipping

import (
	"errors"
	"strconv"
	"strings"
)

// ErrNotFound reports an unknown id, or another account's (never said which). The store
// returns it for a row it does not find.
var ErrNotFound = errors.New("not found")

// ErrInvalidState reports an action the shipment's or label's state forbids; wrap it with the
// reason: fmt.Errorf("%w: shipment is CANCELLED", ErrInvalidState).
var ErrInvalidState = errors.New("invalid state")

// ErrLabelManifested reports a void refused because the label is in a manifest: the carrier
// holds the manifest, so the label is no longer the shipper's to cancel.
var ErrLabelManifested = errors.New("the label is in a manifest; it can no longer be voided")

// FieldError names one invalid field of a request; Field is a dotted path ("parcel.weight").
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ValidationError lists every invalid field of a request. The other domain packages use it too.
type ValidationError struct {
	Fields []FieldError
}

// Add records one invalid field.
func (e *ValidationError) Add(field, code, message string) {
	e.Fields = append(e.Fields, FieldError{Field: field, Code: code, Message: message})
}

// TooMany records field as too_many when its n entries exceed max.
func (e *ValidationError) TooMany(field string, n, max int) {
	if n > max {
		e.Add(field, "too_many", "must have at most "+strconv.Itoa(max)+" entries")
	}
}

// Err returns e when it holds a field, else nil.
func (e *ValidationError) Err() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("validation failed")
	for i, f := range e.Fields {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		b.WriteString(sep + f.Field + " " + f.Message)
	}
	return b.String()
}

// Reason is why a carrier, or one of its services, gave no rate: a rate error's reasons, and a
// created shipment's messages. Service is empty when the whole carrier gave none.
type Reason struct {
	Carrier string `json:"carrier"`
	Service string `json:"service,omitempty"`
	Message string `json:"message"`
}

// RateError reports that rate shopping found no rate. Code is zip_not_serviced,
// no_rates_available or unknown_rate_shopping_profile.
type RateError struct {
	Code    string
	Message string
	Reasons []Reason
}

func (e *RateError) Error() string { return e.Message }

// Refused reports whether err refuses what was asked for what it asks — fields that fail
// validation, no rate for the route, a state or a rule that forbids it, something named that
// does not exist —, so that asking again, unchanged, is refused again. Failures of the
// machinery (the database, a carrier that did not answer) are not refusals. It reads the
// domain's errors only: the batch worker decides by it whether an item fails or is retried.
func Refused(err error) bool {
	var v *ValidationError
	var r *RateError
	if errors.As(err, &v) || errors.As(err, &r) {
		return true
	}
	for _, refusal := range refusals {
		if errors.Is(err, refusal) {
			return true
		}
	}
	return false
}

// refusals are the domain's sentinel errors that refuse a request (Refused).
var refusals = []error{ErrNotFound, ErrInvalidState, ErrLabelManifested, ErrTrackingNumbersExhausted, ErrTrackingNumberTaken,
	ErrOrderAlreadyShipped, ErrMalformedItem}
