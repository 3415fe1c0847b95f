package shipping

import (
	"context"
	"time"
)

// ShipmentStore is what creating a shipment needs persisted.
type ShipmentStore interface {
	// AccountBrand is the brand an account's shipments carry unless they name one.
	AccountBrand(ctx context.Context, accountID string) (string, error)
	// CreateShipment stores a new OPEN shipment with its rates, and returns its stored
	// rendering.
	CreateShipment(ctx context.Context, s *Shipment) (rendered string, err error)
}

// NewShipment is one shipment to create: for the account, under ID (a new ID when empty), for
// the order OrderID (none when empty; Additional for another parcel of it), as Request asks.
type NewShipment struct {
	AccountID, ID string
	OrderID       string
	Additional    bool
	Request       *ShipmentRequest
}

// Creator creates shipments: the one path every shipment is created by (POST /shipments, orders
// to labels, batch items).
type Creator struct {
	Store   ShipmentStore
	Shopper RateShopper
	Now     func() time.Time
	NewID   func() string
}

// RateShopper quotes a validated request under a rate shopping profile, with the carriers as
// they are now (rating.Profiles).
type RateShopper interface {
	// Shop quotes sr under the profile named key: the rates ordered by price and the reasons
	// of what gave none (a Shipment's Messages). When there is no rate, or no profile of that
	// name, the error is a *RateError.
	Shop(ctx context.Context, key string, sr *ShipmentRequest, shipDate time.Time) (rates []Rate, leftOut []Reason, err error)
}

// Create validates the request, quotes its route under its profile (a return from the
// destination back), and stores the OPEN shipment with its rates. It returns the shipment and
// its stored rendering.
func (c *Creator) Create(ctx context.Context, n NewShipment) (*Shipment, string, error) {
	req, now := n.Request, c.Now().UTC()
	shipDate, err := req.Validate(now)
	if err != nil {
		return nil, "", err
	}
	rates, leftOut, err := c.Shopper.Shop(ctx, req.RateShoppingProfile, req.Routed(), shipDate)
	if err != nil {
		return nil, "", err
	}
	brand := ""
	if req.Brand != nil {
		brand = *req.Brand
	} else if brand, err = c.Store.AccountBrand(ctx, n.AccountID); err != nil {
		return nil, "", err
	}
	id := n.ID
	if id == "" {
		id = c.NewID()
	}
	s := &Shipment{ID: id, AccountID: n.AccountID, Status: StatusOpen, Brand: brand,
		ShipDate: req.ShipDate, Origin: *req.Origin, Destination: *req.Destination, ReturnAddress: *req.ReturnAddress,
		Parcel: *req.Parcel, RateShoppingProfile: req.RateShoppingProfile, RateShoppingStrategy: req.RateShoppingStrategy,
		LabelFormat: req.LabelFormat, CustomReference1: req.CustomReference1, CustomReference2: req.CustomReference2,
		CustomsInfo: req.CustomsInfo, IsReturn: req.IsReturn, OrderID: n.OrderID, Additional: n.Additional,
		ShippingRates: rates, Messages: leftOut,
		CreatedAt: Timestamp{Time: now}, UpdatedAt: Timestamp{Time: now}}
	for i := range s.ShippingRates {
		s.ShippingRates[i].ID, s.ShippingRates[i].ShipmentID = c.NewID(), s.ID
	}
	rendered, err := c.Store.CreateShipment(ctx, s)
	if err != nil {
		return nil, "", err
	}
	return s, rendered, nil
}
