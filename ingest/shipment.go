package ingest

import (
	"time"

	"github.com/waybill/waybill/shipping"
)

// OrderShipment is what POST /orders/{id}/shipments (and a batch item naming an order) sends
// beside the shipment fields: which fulfillment order to ship, the first when empty, and
// whether this is another parcel of an order a label already ships, on purpose
// (shipping.ShipOrder).
type OrderShipment struct {
	FulfillmentOrderID string `json:"fulfillment_order_id"`
	Additional         bool   `json:"additional"`
}

// DefaultParcel is the box of an order's shipment when the caller gives no parcel: a small
// box (its dimensional weight, 5 oz, rarely exceeds the goods'), weighing what the line items
// weigh.
var DefaultParcel = shipping.Parcel{Length: 6, Width: 4, Height: 2, LengthUnit: "IN"}

// ShipmentRequest builds the shipment request for one of the order's fulfillment orders
// (DESIGN §14) from the caller's fields in req: the destination is the fulfillment order's
// (the caller may not give one); the parcel is the caller's, or DefaultParcel, weighing the
// line items' weight when the caller gives no weight; custom_reference_1 is the order's name
// unless the caller gives one. It reports the order's own gaps (no fulfillment order of that
// id, no weight to ship) as validation errors; the request is validated as any other after.
func ShipmentRequest(o Order, fulfillmentOrderID string, req shipping.ShipmentRequest) (shipping.ShipmentRequest, error) {
	var v shipping.ValidationError
	var fo *FulfillmentOrder
	for i := range o.FulfillmentOrders {
		if f := &o.FulfillmentOrders[i]; fulfillmentOrderID == "" || f.ID == fulfillmentOrderID {
			fo = f
			break
		}
	}
	if fo == nil {
		v.Add("fulfillment_order_id", "unknown", "is not a fulfillment order of the order")
		return req, v.Err()
	}
	if req.Destination != nil {
		v.Add("destination", "not_allowed", "comes from the order's fulfillment order")
	}
	d := fo.Destination
	req.Destination = &shipping.Address{Name: d.Name, Company: d.Company, Street1: d.Street1, Street2: d.Street2,
		City: d.City, State: d.State, Zip: d.Zip, Country: d.Country, Email: d.Email, Phone: d.Phone}
	parcel := DefaultParcel
	if req.Parcel != nil {
		parcel = *req.Parcel
	}
	if parcel.Weight == 0 && parcel.WeightUnit == "" {
		if !(fo.WeightOz > 0) {
			v.Add("parcel.weight", "required", "the order's line items give no weight; send a parcel with one")
		}
		parcel.Weight, parcel.WeightUnit = fo.WeightOz, "OZ"
	}
	req.Parcel = &parcel
	if req.CustomReference1 == nil && o.Name != "" {
		name := o.Name
		req.CustomReference1 = &name
	}
	return req, v.Err()
}

// standIn is an order with a valid destination and weight, which CheckShipmentFields builds a
// request from: what is wrong with that request is wrong with the caller's fields.
var standIn = Order{Name: "stand-in", FulfillmentOrders: []FulfillmentOrder{{
	Destination: Address{Name: "Stand In", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"},
	WeightOz:    16}}}

// CheckShipmentFields validates the caller's fields of an order's shipment before the order is
// read (a batch item, when the batch is posted): everything ShipmentRequest and the request's
// Validate would refuse whatever the order holds. The order's own gaps (an unknown
// fulfillment order, no weight) are found when the order is read.
func CheckShipmentFields(req shipping.ShipmentRequest, today time.Time) error {
	r, err := ShipmentRequest(standIn, "", req)
	if err != nil {
		return err
	}
	_, err = r.Validate(today)
	return err
}
