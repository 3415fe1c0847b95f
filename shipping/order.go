package shipping

import "errors"

// Orders to labels: an order ships once, unless the caller asks for another
// parcel on purpose.

// Fulfillment statuses of an imported order: FULFILLED once a label not voided ships it.
const (
	OrderUnfulfilled = "UNFULFILLED"
	OrderFulfilled   = "FULFILLED"
)

// OrderShipment is a shipment made for an order, as the order's rules see it: its id and its
// label's status, empty while it has none.
type OrderShipment struct {
	ID          string
	LabelStatus string
}

// ships reports whether the shipment ships its order: it has a label, not voided.
func (s OrderShipment) ships() bool { return s.LabelStatus != "" && s.LabelStatus != LabelVoided }

// FulfillmentStatus is the fulfillment status of an order, from the shipments made for it.
func FulfillmentStatus(shipments []OrderShipment) string {
	for _, s := range shipments {
		if s.ships() {
			return OrderFulfilled
		}
	}
	return OrderUnfulfilled
}

// ErrOrderAlreadyShipped reports a parcel of an order that a label not voided already ships,
// asked for without "additional": true.
var ErrOrderAlreadyShipped = errors.New("the order already has a label not voided; send \"additional\": true to ship another parcel")

// OrderShippedError is ErrOrderAlreadyShipped with the shipments whose labels ship the order.
type OrderShippedError struct {
	ShipmentIDs []string
}

func (e *OrderShippedError) Error() string { return ErrOrderAlreadyShipped.Error() }
func (e *OrderShippedError) Unwrap() error { return ErrOrderAlreadyShipped }

// ShipOrder decides whether a parcel of an order that made shipments may ship (a shipment be
// created for it, a label bought): not while a label not voided ships the order
// (*OrderShippedError), unless additional asks for another parcel on purpose.
func ShipOrder(shipments []OrderShipment, additional bool) error {
	if additional {
		return nil
	}
	var ids []string
	for _, s := range shipments {
		if s.ships() {
			ids = append(ids, s.ID)
		}
	}
	if ids != nil {
		return &OrderShippedError{ShipmentIDs: ids}
	}
	return nil
}
