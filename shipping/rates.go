package shipping

import "math"

// RateRequest is a parcel on a route to be quoted. The rate engine fills in the zone, the
// transit-days override and the destination's surcharge designation from the profile, so a
// carrier only prices.
type RateRequest struct {
	Origin      Address
	Destination Address
	// Parcel in inches and ounces.
	LengthIn, WidthIn, HeightIn float64
	WeightOz                    float64
	// Zone is the zone (1 to 8) from the zone origin to the destination: the profile's for
	// the route (ZoneFromProfile), else by distance.
	Zone            int
	ZoneFromProfile bool
	// ZoneOrigin is the ZIP3 where the parcel enters the network (rating.Profile.ZoneOrigin).
	ZoneOrigin int
	// TransitDays, when above zero, is the profile's transit time for the route
	// (zone_tnt_mapping); ground services use it instead of their card's days.
	TransitDays int
	// AreaSurcharge is the destination ZIP's designation for this carrier in the profile:
	// "", "DAS" or "EDAS". AreaSurchargeFromProfile says the profile lists the carrier's
	// surcharge ZIPs, which then replace the carrier's own lists.
	AreaSurcharge            string
	AreaSurchargeFromProfile bool
	ShipDate                 string // YYYY-MM-DD
	// DDP says the shipment goes abroad delivered duty paid (its declaration's incoterm): only
	// services with a DDP fee quote it.
	DDP bool
}

// Quote is one carrier service's price for a RateRequest.
type Quote struct {
	Service          string
	PostageCents     int64
	Surcharges       []Surcharge
	RetailCents      int64
	TransitDays      int
	Zone             int
	CountryZone      int // an international quote's zone, 1 to 20 (Zone is then 0)
	BillableWeightOz int64
	DimFactor        int   // the dim factor the billable weight used; DimFactor when 0
	CarrierVersion   int64 // the card version that priced the quote; 0 for a carrier without versions
}

// Surcharge is one addition to a rate's postage.
type Surcharge struct {
	Type        string // FUEL, DAS or EDAS
	AmountCents int64
}

// SurchargesCents is the sum of the quote's surcharges.
func (q Quote) SurchargesCents() int64 {
	var n int64
	for _, s := range q.Surcharges {
		n += s.AmountCents
	}
	return n
}

// TotalCents is what the quote costs: postage plus surcharges.
func (q Quote) TotalCents() int64 { return q.PostageCents + q.SurchargesCents() }

// Money is an amount of a currency; it is written as {amount: 7.45, currency: "USD"}.
type Money struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// USD makes Money of a number of US cents.
func USD(cents int64) Money { return Money{Amount: float64(cents) / 100, Currency: "USD"} }

// Rate is a quoted price for a shipment: one carrier service.
type Rate struct {
	ID                    string       `json:"id"`
	ShipmentID            string       `json:"shipment_id"`
	Carrier               string       `json:"carrier"`
	Service               string       `json:"service"`
	Price                 Money        `json:"price"`
	EstimatedDeliveryDate Timestamp    `json:"estimated_delivery_date"`
	EstimatedDeliveryDays int          `json:"estimated_delivery_days"`
	RateMetadata          RateMetadata `json:"rate_metadata"`

	PostageCents    int64 `json:"-"`
	SurchargesCents int64 `json:"-"`
	TotalCents      int64 `json:"-"`
	RetailCents     int64 `json:"-"`
}

// RateMetadata explains a rate's price, with the real product's field names.
type RateMetadata struct {
	USPSZone int `json:"usps_zone,omitempty"` // the distance zone, 1 to 8; absent abroad
	// CountryZone is an international rate's zone, 1 to 20: the card's zone of the country;
	// absent at home.
	CountryZone int `json:"country_zone,omitempty"`
	// BillableWeight is the weight the rate is priced at, in ounces.
	BillableWeight     int64               `json:"billable_weight"`
	WeightMetadata     WeightMetadata      `json:"weight_metadata"`
	SurchargesMetadata []SurchargeMetadata `json:"surcharges_metadata"`
	// CarrierVersion is the version of the carrier's card that priced the rate;
	// absent for a carrier a host plugs in without versions.
	CarrierVersion int64 `json:"carrier_version,omitempty"`
	// DDPFee is the fee for delivering duty paid, part of the price (a DDP surcharge); absent
	// unless the shipment is DDP.
	DDPFee *Money `json:"ddp_fee,omitempty"`
}

// WeightMetadata explains the billable weight: the larger of the actual weight and the
// dimensional weight (Volume / DimFactor pounds).
type WeightMetadata struct {
	ActualOzWeight   float64 `json:"actual_oz_weight"`
	BillableOzWeight int64   `json:"billable_oz_weight"`
	DimFactor        int     `json:"dim_factor"`    // cubic inches per dimensional pound
	DimThreshold     int     `json:"dim_threshold"` // cubic inches
	Volume           float64 `json:"volume"`        // cubic inches
}

// DimThreshold is the volume, in cubic inches, that rate_metadata reports as the threshold of
// dimensional weight (the real product's 1 cubic foot). The built-in cards price dimensional
// weight at every volume, so it is information, not a rule of theirs.
const DimThreshold = 1728

// SurchargeMetadata is one surcharge as rate_metadata shows it.
type SurchargeMetadata struct {
	SurchargeType string `json:"surcharge_type"` // FUEL, DAS, EDAS, INSURANCE
	Surcharge     Money  `json:"surcharge"`
}

// Strategies of rate shopping.
const (
	StrategyAll      = "ALL"
	StrategyCheapest = "CHEAPEST"
	StrategyFastest  = "FASTEST"
)

// Rate error codes.
const (
	CodeZipNotServiced = "zip_not_serviced"
	CodeNoRates        = "no_rates_available"
	CodeUnknownProfile = "unknown_rate_shopping_profile"
)

// Cheapest returns the cheapest of rates (ties: fewer days), or false when there is none.
func Cheapest(rates []Rate) (Rate, bool) {
	if len(rates) == 0 {
		return Rate{}, false
	}
	best := rates[0]
	for _, r := range rates[1:] {
		if r.TotalCents < best.TotalCents || r.TotalCents == best.TotalCents && r.EstimatedDeliveryDays < best.EstimatedDeliveryDays {
			best = r
		}
	}
	return best, true
}

// DimFactor is how many cubic inches make a dimensional pound unless a card says otherwise.
const DimFactor = 166

// BillableWeightOz is the weight a parcel is priced at: the larger of its actual weight and its
// dimensional weight (L×W×H/dimFactor lb), in whole ounces rounded up: at least one ounce.
func BillableWeightOz(lengthIn, widthIn, heightIn, weightOz float64, dimFactor int) int64 {
	dim := lengthIn * widthIn * heightIn / float64(dimFactor) * 16
	// A hair of tolerance keeps float noise (16.000000001) from adding an ounce.
	return max(1, int64(math.Ceil(math.Max(weightOz, dim)-1e-9)))
}

// SurchargeDDP is the surcharge type of a DDP fee: the duties and taxes the carrier collects
// from the shipper instead of the addressee.
const SurchargeDDP = "DDP"
