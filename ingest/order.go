package ingest

import (
	"time"

	"github.com/waybill/waybill/shipping"
)

// Import statuses. An import is QUEUED when committed, PROCESSING while a worker holds its
// lease, and ends PROCESSED or FAILED.
const (
	StatusQueued     = "QUEUED"
	StatusProcessing = "PROCESSING"
	StatusProcessed  = "PROCESSED"
	StatusFailed     = "FAILED"
)

// Import is one accepted order import request: its raw body is in the inbox.
type Import struct {
	ID        string
	AccountID string
	// OrderID is the payload's id as received, nil when the payload has none.
	OrderID     *string
	Status      string
	Errors      []shipping.FieldError
	Attempts    int
	ReceivedAt  time.Time
	ProcessedAt *time.Time
}

// Order is an imported order, normalized: weights in ounces, money in integer cents,
// addresses in the shipping address model. One order exists per account and payload id; a
// later import of the same id replaces it.
type Order struct {
	// ID is waybill's id of the order; OrderID is the id the sender gave it.
	ID                string             `json:"id"`
	AccountID         string             `json:"-"`
	OrderID           string             `json:"order_id"`
	Name              string             `json:"name"`
	Tags              []string           `json:"tags"`
	ShippingAddress   *Address           `json:"shipping_address"`
	FulfillmentOrders []FulfillmentOrder `json:"fulfillment_orders"`
	// ImportID is the import the order's current content comes from.
	ImportID  string    `json:"import_id"`
	CreatedAt time.Time `json:"-"`
	UpdatedAt time.Time `json:"-"`
}

// Address is a postal address in the field names of the shipping address model (interface
// 2.4), plus the sender's coordinates when it gave them.
type Address struct {
	Name      string   `json:"name"`
	Street1   string   `json:"street1"`
	Street2   string   `json:"street2"`
	City      string   `json:"city"`
	State     string   `json:"state"`
	Zip       string   `json:"zip"`
	Country   string   `json:"country"`
	Company   string   `json:"company"`
	Email     string   `json:"email"`
	Phone     string   `json:"phone"`
	Latitude  *float64 `json:"latitude,omitempty"`
	Longitude *float64 `json:"longitude,omitempty"`
}

// FulfillmentOrder is one shipment-to-be of an order: a destination and the items to send.
type FulfillmentOrder struct {
	ID               string     `json:"id"`
	Status           string     `json:"status"`
	Destination      Address    `json:"destination"`
	DeliveryMethod   string     `json:"delivery_method"`
	AssignedLocation string     `json:"assigned_location"`
	Incoterm         string     `json:"incoterm"`
	LineItems        []LineItem `json:"line_items"`
	// WeightOz is the weight of the items that require shipping, times their quantities.
	WeightOz float64 `json:"weight_oz"`
}

// LineItem is one product line of a fulfillment order.
type LineItem struct {
	ID                string `json:"id"`
	SKU               string `json:"sku"`
	ProductTitle      string `json:"product_title"`
	VariantTitle      string `json:"variant_title"`
	ProductID         string `json:"product_id"`
	ImageURL          string `json:"image_url"`
	Quantity          int64  `json:"quantity"`
	RemainingQuantity int64  `json:"remaining_quantity"`
	RequiresShipping  bool   `json:"requires_shipping"`
	// WeightOz is one unit's weight in ounces, nil when the payload gives none.
	WeightOz *float64 `json:"weight_oz"`
	// Prices of one unit in cents of Currency; nil when the payload gives none.
	UnitPriceCents           *int64 `json:"unit_price_cents"`
	DiscountedUnitPriceCents *int64 `json:"discounted_unit_price_cents"`
	Currency                 string `json:"currency"`
	CountryOfOrigin          string `json:"country_of_origin"`
	HarmonizedSystemCode     string `json:"harmonized_system_code"`
	// VariantPriceCents is the variant's price (variant.price) and VariantWeightOz its measured
	// weight (variant.inventoryItem.measurement.weight), one unit's, when the payload gives
	// them: what a customs declaration declares.
	VariantPriceCents *int64   `json:"variant_price_cents,omitempty"`
	VariantWeightOz   *float64 `json:"variant_weight_oz,omitempty"`
}
