package shipping

// RateRequest is a parcel on a route to be quoted. (Filled in by the rate shopping work.)
type RateRequest struct{}

// Quote is one carrier service's price for a RateRequest. (Filled in by the rate shopping work.)
type Quote struct{}

// Shipment is a shipment with its rates and, once bought, its label. (Filled in by the rate
// shopping work.)
type Shipment struct {
	ShippingLabel *Label `json:"shipping_label,omitempty"`
}
