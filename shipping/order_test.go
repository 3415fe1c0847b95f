package shipping

import (
	"errors"
	"slices"
	"testing"
)

// TestShipOrder: an order ships once — a label not voided ships it —, unless the caller asks
// for another parcel on purpose; the refusal names the shipments whose labels ship it.
func TestShipOrder(t *testing.T) {
	open := OrderShipment{ID: "s-open"}
	voided := OrderShipment{ID: "s-voided", LabelStatus: LabelVoided}
	bought := OrderShipment{ID: "s-bought", LabelStatus: LabelPreTransit}
	delivered := OrderShipment{ID: "s-delivered", LabelStatus: LabelDelivered}
	tests := []struct {
		name       string
		shipments  []OrderShipment
		additional bool
		status     string
		refusedBy  []string // nil: allowed
	}{
		{"no shipment", nil, false, OrderUnfulfilled, nil},
		{"a shipment without a label", []OrderShipment{open}, false, OrderUnfulfilled, nil},
		{"a voided label", []OrderShipment{voided, open}, false, OrderUnfulfilled, nil},
		{"a label", []OrderShipment{voided, bought}, false, OrderFulfilled, []string{"s-bought"}},
		{"two labels", []OrderShipment{bought, open, delivered}, false, OrderFulfilled, []string{"s-bought", "s-delivered"}},
		{"a label, another parcel asked for", []OrderShipment{bought}, true, OrderFulfilled, nil},
		{"a delivered label, another parcel asked for", []OrderShipment{delivered}, true, OrderFulfilled, nil},
	}
	for _, tt := range tests {
		if got := FulfillmentStatus(tt.shipments); got != tt.status {
			t.Errorf("FulfillmentStatus(%s) = %s; want %s", tt.name, got, tt.status)
		}
		err := ShipOrder(tt.shipments, tt.additional)
		var shipped *OrderShippedError
		switch {
		case tt.refusedBy == nil && err != nil:
			t.Errorf("ShipOrder(%s, additional %v) = %v; want nil", tt.name, tt.additional, err)
		case tt.refusedBy != nil && (!errors.As(err, &shipped) || !errors.Is(err, ErrOrderAlreadyShipped) ||
			!slices.Equal(shipped.ShipmentIDs, tt.refusedBy)):
			t.Errorf("ShipOrder(%s, additional %v) = %v; want order_already_shipped by %v", tt.name, tt.additional, err, tt.refusedBy)
		}
	}
}
