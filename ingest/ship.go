package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// BatchItem is one shipment of a batch: the fields of POST /shipments, or an order's shipment
// (order_id beside the fields of POST /orders/{id}/shipments).
type BatchItem struct {
	OrderID *string `json:"order_id"`
	shipping.ShipmentRequest
	OrderShipment
}

// Check checks the item as far as it can be known before its order is read, its errors at the
// item's own paths: an order's id, and the shipment fields that the order leaves to the caller;
// without an order, a whole shipment request and no order fields.
func (item BatchItem) Check(today time.Time) error {
	var v shipping.ValidationError
	var err error
	if item.OrderID != nil {
		if *item.OrderID == "" || len(*item.OrderID) > 255 {
			v.Add("order_id", "invalid", "must be an order's id")
		}
		err = CheckShipmentFields(item.ShipmentRequest, today)
	} else {
		if item.FulfillmentOrderID != "" {
			v.Add("fulfillment_order_id", "not_allowed", "is for an item with an order_id")
		}
		if item.Additional {
			v.Add("additional", "not_allowed", "is for an item with an order_id")
		}
		_, err = item.ShipmentRequest.Validate(today)
	}
	var fields *shipping.ValidationError
	if errors.As(err, &fields) {
		v.Fields = append(v.Fields, fields.Fields...)
	} else if err != nil {
		return err
	}
	return v.Err()
}

// Shipment is the shipment to create for the item claimed as c: its order's (ShipOrder), if it
// names one, with the batch's label format unless the item gives one.
func (item BatchItem) Shipment(ctx context.Context, st OrderStore, c shipping.BatchClaim, now time.Time) (shipping.NewShipment, error) {
	n := shipping.NewShipment{AccountID: c.AccountID, Request: &item.ShipmentRequest}
	if item.OrderID != nil {
		var err error
		if n, err = ShipOrder(ctx, st, c.AccountID, *item.OrderID, item.OrderShipment, item.ShipmentRequest, now); err != nil {
			return n, err
		}
	}
	if n.Request.LabelFormat == "" {
		n.Request.LabelFormat = c.LabelFormat
	}
	n.ID = c.ShipmentID
	return n, nil
}

// BatchItems reads batch items' bodies for the batch worker (shipping.ItemShipments).
type BatchItems struct {
	Store OrderStore
	Now   func() time.Time
}

// ItemShipment is the shipment to create for the item claimed as c (BatchItem.Shipment), from
// its body; shipping.ErrMalformedItem when the body does not decode.
func (b BatchItems) ItemShipment(ctx context.Context, c shipping.BatchClaim) (shipping.NewShipment, error) {
	var item BatchItem
	if err := json.Unmarshal([]byte(c.Body), &item); err != nil { // checked when posted: not expected
		return shipping.NewShipment{}, fmt.Errorf("%w: %v", shipping.ErrMalformedItem, err)
	}
	return item.Shipment(ctx, b.Store, c, b.Now().UTC())
}
