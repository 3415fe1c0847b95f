// Package manifest holds the rules of end-of-day close-out: which labels a manifest collects,
// and its two documents, the PDF the driver signs and the carrier's CSV. Both documents are
// drawn from the manifest alone, so the same manifest gives the same bytes; they are drawn
// once, when the manifest is created, and the store serves the stored bytes.
package manifest

import (
	"errors"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Status is a manifest's status: it is created complete and never changes.
const StatusCreated = "CREATED"

// Manifest is one close-out: the labels of one carrier and ship date handed over together.
type Manifest struct {
	ID        string
	Carrier   string
	ShipDate  string // YYYY-MM-DD
	Shipper   Shipper
	CreatedAt time.Time
	Lines     []Line // one per label, in the order the manifest lists them
}

// Shipper is who hands the parcels over: the account's name, and the address they are picked
// up from when all the labels share one origin.
type Shipper struct {
	Name    string
	Address []string
}

// Line is one label of a manifest, as its documents show it: sizes in inches, weight in
// ounces.
type Line struct {
	TrackingCode string
	Service      string
	ShipDate     string
	WeightOz     float64
	LengthIn     float64
	WidthIn      float64
	HeightIn     float64
	FromZip      string
	To           shipping.Address
	Reference    string
}

// The values of the rule (Awaits) that the store's queries bind: the status of a shipment whose
// label waits, the label's own status, and whether a return's label is collected (never).
const (
	AwaitedShipmentStatus = shipping.StatusPurchased
	AwaitedLabelStatus    = shipping.LabelPreTransit
	CollectsReturns       = false
)

// Qualifies reports whether a manifest of carrier and shipDate collects the label l of shipment
// s: a label of that carrier on a shipment of that date that is still the shipper's to hand
// over — PRE_TRANSIT, never scanned, not voided, and in no manifest yet — and that leaves with
// the shipper: a return label enters the mail stream from the customer, so it never does, and
// stays voidable until its first scan. This is the one statement of the rule; the store's
// queries (the close-out's read and claim, the pending count) bind its values and select
// exactly these labels, which the store suite checks over every combination of its inputs.
func Qualifies(s *shipping.Shipment, l *shipping.Label, carrier, shipDate string) bool {
	return Awaits(s, l) && s.ShipDate == shipDate && l.Carrier == carrier
}

// Awaits reports whether label l of shipment s waits for a manifest of its carrier and its
// shipment's ship date: whether one would collect it (Qualifies).
func Awaits(s *shipping.Shipment, l *shipping.Label) bool {
	return s != nil && l != nil && s.IsReturn == CollectsReturns && s.Status == AwaitedShipmentStatus &&
		l.Status == AwaitedLabelStatus && !l.Scanned() && l.ManifestID == nil
}

// View is a manifest as the API answers it (GET /manifests/{id}) and as MANIFEST_CREATED
// carries it. PDFURL and CSVURL are the API's capability URLs, empty as stored.
type View struct {
	ID               string             `json:"id"`
	Carrier          string             `json:"carrier"`
	ShipDate         string             `json:"ship_date"`
	Status           string             `json:"status"`
	LabelCount       int                `json:"label_count"`
	ShippingLabelIDs []string           `json:"shipping_label_ids"`
	PDFURL           string             `json:"pdf_url"`
	CSVURL           string             `json:"csv_url"`
	CreatedAt        shipping.Timestamp `json:"created_at"`
}

// Pending is how many labels of one carrier and ship date wait for a manifest
// (GET /manifests/pending).
type Pending struct {
	Carrier    string `json:"carrier"`
	ShipDate   string `json:"ship_date"`
	LabelCount int    `json:"label_count"`
}

// LineFor is the manifest line of label l of shipment s.
func LineFor(s *shipping.Shipment, l *shipping.Label) Line {
	length, width, height, oz := s.Parcel.Inches()
	line := Line{TrackingCode: l.TrackingCode, Service: l.Service, ShipDate: s.ShipDate,
		WeightOz: round2(oz), LengthIn: round2(length), WidthIn: round2(width), HeightIn: round2(height),
		FromZip: s.Origin.Zip, To: s.Destination}
	if s.CustomReference1 != nil {
		line.Reference = *s.CustomReference1
	}
	return line
}

// ShipperFor is the shipper block of a manifest of the account named name (and brand) over
// shipments: their common origin's address, or none when they leave from several.
func ShipperFor(name, brand string, shipments []*shipping.Shipment) Shipper {
	sh := Shipper{Name: name}
	if brand != "" && brand != name {
		sh.Name += " (" + brand + ")"
	}
	if len(shipments) == 0 {
		return sh
	}
	origin := shipments[0].Origin
	for _, s := range shipments[1:] {
		if s.Origin != origin {
			sh.Address = []string{"Several pickup addresses (see the carrier CSV)"}
			return sh
		}
	}
	sh.Address = addressLines(origin)
	return sh
}

func addressLines(a shipping.Address) []string {
	var lines []string
	for _, l := range []string{a.Name, a.Company, a.Street1, a.Street2} {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return append(lines, a.City+", "+a.State+" "+a.Zip+" "+a.Country)
}

// round2 rounds to hundredths, the precision the documents show.
func round2(v float64) float64 {
	return float64(int64(v*100+0.5)) / 100
}

// ErrNothingToManifest reports a close-out that finds no label to collect.
var ErrNothingToManifest = errors.New("no unmanifested PRE_TRANSIT label for that carrier and ship date")

// Request is a close-out request: POST /manifests {carrier, ship_date?}.
type Request struct {
	Carrier  string `json:"carrier"`
	ShipDate string `json:"ship_date"`
}

// Validate checks the request and fills in its default: ship_date today (YYYY-MM-DD, UTC).
// The carrier must be one known reports the deployment has, by its exact code: a typo'd or
// miscased code is refused, never taken for a carrier with nothing to close. Any
// date is accepted, past ones included: a day is closed out after it ends too.
func (r *Request) Validate(today string, known func(code string) bool) error {
	var v shipping.ValidationError
	switch {
	case r.Carrier == "":
		v.Add("carrier", "required", "is required")
	case len(r.Carrier) > 64:
		v.Add("carrier", "too_long", "must be at most 64 characters")
	case !known(r.Carrier):
		v.Add("carrier", "unknown", "is not a carrier of this deployment (codes are case-sensitive)")
	}
	if r.ShipDate == "" {
		r.ShipDate = today
	} else if _, err := time.Parse(time.DateOnly, r.ShipDate); err != nil {
		v.Add("ship_date", "invalid", "must be a date YYYY-MM-DD")
	}
	return v.Err()
}
