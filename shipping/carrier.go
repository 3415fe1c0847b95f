package shipping

import (
	"context"
	"errors"
)

// Carrier quotes, buys and voids labels. Stored carriers are table-driven rate cards
// (carrier.Table); a host application plugs in a real carrier by implementing this
// interface.
type Carrier interface {
	// Name is the carrier's code as it appears on rates and labels.
	Name() string
	// Rates quotes every service of the carrier that can carry the parcel on the route. A
	// carrier that cannot serve the request returns no quotes and an error saying why (its
	// message becomes the carrier's entry in a rate error's reasons).
	Rates(ctx context.Context, req RateRequest) ([]Quote, error)
	// Purchase buys a label for a quoted service and returns its tracking code.
	Purchase(ctx context.Context, req PurchaseRequest) (trackingCode string, err error)
	// Void cancels a label that has not entered the carrier's network.
	Void(ctx context.Context, trackingCode string) error
}

// ServiceQuoter is what a carrier also implements when it can say which of its services it
// left out of a quote, and why, while quoting others (a service's own weight limit, a parcel
// past its last weight break): the shipment lists them in its messages. Quotes is
// Rates, with a Reason naming the Service for each service left out.
type ServiceQuoter interface {
	Quotes(ctx context.Context, req RateRequest) ([]Quote, []Reason, error)
}

// PurchaseRequest is what a carrier needs to buy a label. LabelID is unique and stable, so a
// carrier may derive the tracking code from it.
type PurchaseRequest struct {
	LabelID    string
	ShipmentID string
	Service    string
	ShipDate   string // YYYY-MM-DD
	// Serials hands out the carrier's tracking serials inside the purchase's transaction, so
	// a serial is used once and a failed purchase uses none; a carrier that numbers its own
	// labels ignores it.
	Serials SerialSource
}

// SerialSource hands out a carrier's tracking serials, each once: never again, also after a
// crash and to another process sharing the database.
type SerialSource interface {
	// NextSerial returns the carrier's next serial, at least from; one above to when the
	// serials from to to are all used. A source may reserve serials ahead, never above to.
	NextSerial(ctx context.Context, carrier string, from, to int64) (int64, error)
}

// Tracker is what a carrier also implements when waybill can ask it for a label's tracking
// events: a background worker polls it for the unfinished labels it carries. The
// events go through the same rules as the operator feed; an event returned again is ignored
// as a duplicate, so Track may return a label's whole history each time.
type Tracker interface {
	Track(ctx context.Context, trackingCode string) ([]TrackingEvent, error)
}

// ErrZipNotServiced is a carrier's reason for not quoting a destination outside its coverage.
var ErrZipNotServiced = errors.New("zip not serviced")

// ErrTrackingNumbersExhausted reports that a carrier's range of tracking numbers is used up:
// nothing can be bought from it until an operator loads a new range.
var ErrTrackingNumbersExhausted = errors.New("the carrier's range of tracking numbers is used up")

// ErrTrackingNumberTaken reports that the tracking number a buy would issue is already another
// label's (a host's Go carrier issued it twice, or ranges loaded around the overlap check
// meet): the buy is refused and nothing is bought.
var ErrTrackingNumberTaken = errors.New("the tracking number the carrier issued is already another label's")
