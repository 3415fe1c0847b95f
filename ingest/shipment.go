package ingest

import (
	"fmt"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/customs"
)

// OrderShipment is what POST /orders/{id}/shipments (and a batch item naming an order) sends
// beside the shipment fields: which fulfillment order to ship, the first when empty, and
// whether this is another parcel of an order a label already ships, on purpose
// (shipping.ShipOrder).
type OrderShipment struct {
	FulfillmentOrderID string `json:"fulfillment_order_id"`
	Additional         bool   `json:"additional"`
	// CustomsSigner signs the customs declaration made from the order's line items for a
	// shipment abroad; the account's name when empty.
	CustomsSigner string `json:"customs_signer"`
}

// DefaultParcel is the box of an order's shipment when the caller gives no parcel: a small
// box (its dimensional weight, 5 oz, rarely exceeds the goods'), weighing what the line items
// weigh.
var DefaultParcel = shipping.Parcel{Length: 6, Width: 4, Height: 2, LengthUnit: "IN"}

// ShipmentRequest builds the shipment request for one of the order's fulfillment orders
// from the caller's fields in req: the destination is the fulfillment order's
// (the caller may not give one); the parcel is the caller's, or DefaultParcel, weighing the
// line items' weight when the caller gives no weight; custom_reference_1 is the order's name
// unless the caller gives one. It reports the order's own gaps (no fulfillment order of that
// id, no weight to ship) as validation errors; the request is validated as any other after.
//
// A shipment to another country gets, unless the caller gives one, a customs declaration made
// from the fulfillment order's line items and duties, signed by signer (Declaration).
func ShipmentRequest(o Order, fulfillmentOrderID, signer string, req shipping.ShipmentRequest) (shipping.ShipmentRequest, error) {
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
	if req.CustomsInfo == nil && req.Origin != nil && abroad(req.Origin.Country, d.Country) {
		req.CustomsInfo = Declaration(fo, signer, &v)
	}
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
	r, err := ShipmentRequest(standIn, "", "", req)
	if err != nil {
		return err
	}
	_, err = r.Validate(today)
	return err
}

// Declaration is the customs declaration of a fulfillment order shipped abroad:
// one item per line that requires shipping — description the product's title with the
// variant's, quantity the line's, value the variant's price (else the line's unit price) times
// the quantity, weight the variant's measured weight (else the line's) times the quantity, HS
// code and origin from the variant's inventory item —, the incoterm of the order's duties, and
// signer. A line without HS code, origin, price or weight is reported in v, named by its index
// and id; customs.Declaration.Validate checks the rest when the request is validated.
func Declaration(fo *FulfillmentOrder, signer string, v *shipping.ValidationError) *shipping.CustomsInfo {
	d := &shipping.CustomsInfo{CustomsSigner: signer, CustomsItems: []shipping.CustomsItem{}}
	if fo.Incoterm != "" {
		term := fo.Incoterm
		d.Incoterm = &term
	}
	for i, li := range fo.LineItems {
		if !li.RequiresShipping {
			continue
		}
		field := fmt.Sprintf("line_items[%d]", i)
		line := "line item " + li.ID
		if li.ProductTitle != "" {
			line += " (" + li.ProductTitle + ")"
		}
		missing := func(name, what string) {
			v.Add(field+"."+name, "required", fmt.Sprintf("%s has no %s, which a customs declaration needs", line, what))
		}
		desc := li.ProductTitle
		if li.VariantTitle != "" {
			desc += " - " + li.VariantTitle
		}
		price, weight := li.VariantPriceCents, li.VariantWeightOz
		if price == nil {
			price = li.UnitPriceCents
		}
		if weight == nil {
			weight = li.WeightOz
		}
		hs := li.HarmonizedSystemCode
		switch {
		case hs == "":
			missing("harmonized_system_code", "HS code (variant.inventoryItem.harmonizedSystemCode)")
		case li.CountryOfOrigin == "":
			missing("country_of_origin", "origin country (variant.inventoryItem.countryCodeOfOrigin)")
		case price == nil:
			missing("price", "price (variant.price)")
		case weight == nil:
			missing("weight", "weight (variant.inventoryItem.measurement.weight or weight)")
		default:
			d.CustomsItems = append(d.CustomsItems, shipping.CustomsItem{Description: desc, HarmonizedSystemCode: &hs,
				OriginCountry: li.CountryOfOrigin, Quantity: li.Quantity, Value: float64(*price*li.Quantity) / 100,
				Weight: *weight * float64(li.Quantity), WeightUnit: "OZ"})
		}
	}
	return d
}

// abroad reports whether a parcel from the country from to the country to crosses a border:
// both are ISO 3166-1 codes (an invalid one is the request's validation's to report) and differ.
func abroad(from, to string) bool {
	f, okFrom := customs.LookupCountry(from)
	t, okTo := customs.LookupCountry(to)
	return okFrom && okTo && f.Code != t.Code
}
