package shipping

// RateRequest is a parcel on a route to be quoted. (Filled in by the rate shopping work.)
type RateRequest struct{}

// Quote is one carrier service's price for a RateRequest. (Filled in by the rate shopping work.)
type Quote struct{}
