package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// orderStore is an OrderStore of one account's orders and shipments.
type orderStore struct {
	account   string
	orders    []Order
	shipments map[string][]shipping.OrderShipment
	bySender  int // OrderBySender calls
}

func (s *orderStore) find(accountID string, match func(Order) bool) (Order, error) {
	for _, o := range s.orders {
		if accountID == s.account && match(o) {
			return o, nil
		}
	}
	return Order{}, shipping.ErrNotFound
}

func (s *orderStore) Order(ctx context.Context, accountID, id string) (Order, error) {
	return s.find(accountID, func(o Order) bool { return o.ID == id })
}

func (s *orderStore) OrderBySender(ctx context.Context, accountID, orderID string) (Order, error) {
	s.bySender++
	return s.find(accountID, func(o Order) bool { return o.OrderID == orderID })
}

func (s *orderStore) AccountName(ctx context.Context, accountID string) (string, error) {
	return "Acme Goods", nil
}

func (s *orderStore) OrderShipments(ctx context.Context, accountID string, ids []string) (map[string][]shipping.OrderShipment, error) {
	return s.shipments, nil
}

// TestShipOrder: the order is found by waybill's id, then by the sender's; an order a label
// ships is refused unless another parcel is asked for; a voided label ships nothing; the
// customs declaration is signed by the account's name unless the caller names a signer; a
// request the order cannot complete is refused with its fields.
func TestShipOrder(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	origin := &shipping.Address{Name: "Acme", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"}
	mugOz, mugCents := 24.0, int64(1200)
	home := Order{ID: "o1", OrderID: "gid://shop/Order/1", Name: "#1", FulfillmentOrders: []FulfillmentOrder{{ID: "fo1", WeightOz: 24,
		Destination: Address{Name: "Jane Doe", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"}}}}
	abroad := Order{ID: "o2", OrderID: "2", Name: "#2", FulfillmentOrders: []FulfillmentOrder{{ID: "fo1", WeightOz: 24,
		Destination: Address{Name: "Ann Lee", Street1: "1 Queen St", City: "Toronto", State: "ON", Zip: "M5H 2N2", Country: "CA"},
		Incoterm:    "DDP", LineItems: []LineItem{{ID: "li1", ProductTitle: "Mug", Quantity: 1, RequiresShipping: true, WeightOz: &mugOz,
			UnitPriceCents: &mugCents, HarmonizedSystemCode: "6912.00", CountryOfOrigin: "US"}}}}}
	bought := []shipping.OrderShipment{{ID: "shp_1", LabelStatus: shipping.LabelPreTransit}}
	voided := []shipping.OrderShipment{{ID: "shp_1", LabelStatus: shipping.LabelVoided}}
	tests := []struct {
		name      string
		id        string
		body      OrderShipment
		shipments []shipping.OrderShipment
		wantOrder string
		wantErr   string // a substring of the error, or its field
		bySender  int
		signer    string
	}{
		{"by waybill's id", "o1", OrderShipment{}, nil, "o1", "", 0, ""},
		{"by the sender's id", "gid://shop/Order/1", OrderShipment{}, nil, "o1", "", 1, ""},
		{"unknown", "o9", OrderShipment{}, nil, "", "not found", 1, ""},
		{"too long for a sender's id", strings.Repeat("x", 256), OrderShipment{}, nil, "", "not found", 0, ""},
		{"shipped", "o1", OrderShipment{}, bought, "", "already has a label", 0, ""},
		{"shipped, another parcel asked for", "o1", OrderShipment{Additional: true}, bought, "o1", "", 0, ""},
		{"its label voided", "o1", OrderShipment{}, voided, "o1", "", 0, ""},
		{"unknown fulfillment order", "o1", OrderShipment{FulfillmentOrderID: "fo9"}, nil, "", "fulfillment_order_id", 0, ""},
		{"abroad, signed by the account", "o2", OrderShipment{}, nil, "o2", "", 0, "Acme Goods"},
		{"abroad, signed by the caller", "o2", OrderShipment{CustomsSigner: "J. Smith"}, nil, "o2", "", 0, "J. Smith"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &orderStore{account: "acct", orders: []Order{home, abroad}, shipments: map[string][]shipping.OrderShipment{"o1": tt.shipments}}
			n, err := ShipOrder(context.Background(), st, "acct", tt.id, tt.body, shipping.ShipmentRequest{Origin: origin}, now)
			if st.bySender != tt.bySender {
				t.Errorf("OrderBySender called %d times, want %d", st.bySender, tt.bySender)
			}
			if tt.wantErr != "" {
				var v *shipping.ValidationError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) && !(errors.As(err, &v) && v.Fields[0].Field == tt.wantErr) {
					t.Fatalf("ShipOrder = %v; want an error %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ShipOrder = %v", err)
			}
			if n.AccountID != "acct" || n.OrderID != tt.wantOrder || n.Additional != tt.body.Additional || n.Request == nil {
				t.Fatalf("ShipOrder = %+v; want order %s", n, tt.wantOrder)
			}
			if got := n.Request.CustomsInfo; tt.signer != "" && (got == nil || got.CustomsSigner != tt.signer) {
				t.Errorf("customs = %+v; want signed by %s", got, tt.signer)
			}
		})
	}
}

// TestBatchItemCheck: an item naming an order is checked for the fields the order leaves to the
// caller; one without an order is a whole shipment request and takes no order fields.
func TestBatchItemCheck(t *testing.T) {
	today := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	id := func(s string) *string { return &s }
	la := &shipping.Address{Name: "Acme", Street1: "1 Main St", City: "Los Angeles", State: "CA", Zip: "90058", Country: "US"}
	ny := &shipping.Address{Name: "B", Street1: "5 Broadway", City: "New York", State: "NY", Zip: "10001", Country: "US"}
	box := &shipping.Parcel{Length: 10, Width: 8, Height: 4, LengthUnit: "IN", Weight: 20, WeightUnit: "OZ"}
	whole := shipping.ShipmentRequest{Origin: la, Destination: ny, Parcel: box}
	tests := []struct {
		name   string
		item   BatchItem
		fields []string
	}{
		{"a whole shipment", BatchItem{ShipmentRequest: whole}, nil},
		{"an order's, with an origin", BatchItem{OrderID: id("o1"), ShipmentRequest: shipping.ShipmentRequest{Origin: la}}, nil},
		{"an order's, empty id", BatchItem{OrderID: id(""), ShipmentRequest: shipping.ShipmentRequest{Origin: la}}, []string{"order_id"}},
		{"an order's, id too long", BatchItem{OrderID: id(strings.Repeat("x", 256)), ShipmentRequest: shipping.ShipmentRequest{Origin: la}},
			[]string{"order_id"}},
		{"an order's, with a destination", BatchItem{OrderID: id("o1"), ShipmentRequest: whole}, []string{"destination"}},
		{"no order, order fields", BatchItem{ShipmentRequest: whole, OrderShipment: OrderShipment{FulfillmentOrderID: "fo1", Additional: true}},
			[]string{"fulfillment_order_id", "additional"}},
		{"no order, no destination", BatchItem{ShipmentRequest: shipping.ShipmentRequest{Origin: la, Parcel: box}}, []string{"destination"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.item.Check(today)
			var got []string
			var v *shipping.ValidationError
			if errors.As(err, &v) {
				for _, f := range v.Fields {
					got = append(got, f.Field)
				}
			} else if err != nil {
				t.Fatalf("Check = %v", err)
			}
			if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Errorf("Check fields = %v, want %v", got, tt.fields)
			}
		})
	}
}
