package ingest

import (
	"context"
	"errors"
	"time"

	"github.com/waybill/waybill/shipping"
)

// OrderStore is what an order's shipment reads.
type OrderStore interface {
	// Order reads the account's order with waybill's id; shipping.ErrNotFound when none has it.
	Order(ctx context.Context, accountID, id string) (Order, error)
	// OrderBySender reads the account's order with the sender's order_id (one at most);
	// shipping.ErrNotFound when none has it.
	OrderBySender(ctx context.Context, accountID, orderID string) (Order, error)
	// AccountName is the account's name.
	AccountName(ctx context.Context, accountID string) (string, error)
	// OrderShipments are the shipments made for each of the orders, by order id.
	OrderShipments(ctx context.Context, accountID string, orderIDs []string) (map[string][]shipping.OrderShipment, error)
}

// FindOrder returns the account's order by waybill's id or, when no order has that id, by the
// sender's order_id (at most 255 characters); another account's order is shipping.ErrNotFound,
// like an unknown one.
func FindOrder(ctx context.Context, st OrderStore, accountID, id string) (Order, error) {
	o, err := st.Order(ctx, accountID, id)
	if errors.Is(err, shipping.ErrNotFound) && len(id) <= 255 {
		return st.OrderBySender(ctx, accountID, id)
	}
	return o, err
}

// ShipOrder is the shipment to create for an order (POST /orders/{id}/shipments, a batch item
// naming an order): the request ShipmentRequest builds from the order and the caller's fields
// in req, its customs declaration signed by the account's name unless body names a signer. A
// valid request is refused while a label not voided ships the order, unless body asks for
// another parcel (shipping.ShipOrder). The buy checks again, in its transaction, so that of two
// requests that race only one buys; this check refuses before a shipment is made for nothing.
func ShipOrder(ctx context.Context, st OrderStore, accountID, orderID string, body OrderShipment, req shipping.ShipmentRequest,
	now time.Time) (shipping.NewShipment, error) {
	o, err := FindOrder(ctx, st, accountID, orderID)
	if err != nil {
		return shipping.NewShipment{}, err
	}
	signer := body.CustomsSigner
	if signer == "" {
		if signer, err = st.AccountName(ctx, accountID); err != nil {
			return shipping.NewShipment{}, err
		}
	}
	if req, err = ShipmentRequest(o, body.FulfillmentOrderID, signer, req); err != nil {
		return shipping.NewShipment{}, err
	}
	check := req // Validate fills in defaults; the create validates req itself
	if _, err := check.Validate(now); err != nil {
		return shipping.NewShipment{}, err
	}
	shipments, err := st.OrderShipments(ctx, accountID, []string{o.ID})
	if err != nil {
		return shipping.NewShipment{}, err
	}
	if err := shipping.ShipOrder(shipments[o.ID], body.Additional); err != nil {
		return shipping.NewShipment{}, err
	}
	return shipping.NewShipment{AccountID: accountID, OrderID: o.ID, Additional: body.Additional, Request: &req}, nil
}
