package shipping

import "testing"

// TestRoute checks the route a request is quoted for: outbound from the origin, a return from
// the destination back to the return address, or to the origin without one.
func TestRoute(t *testing.T) {
	origin := Address{Name: "Acme Warehouse", Zip: "90058"}
	dest := Address{Name: "Jane Doe", Zip: "10001"}
	ret := Address{Name: "Returns Dept", Zip: "89501"}
	tests := []struct {
		name     string
		req      ShipmentRequest
		from, to string
	}{
		{"outbound", ShipmentRequest{Origin: &origin, Destination: &dest}, "Acme Warehouse", "Jane Doe"},
		{"outbound with a return address", ShipmentRequest{Origin: &origin, Destination: &dest, ReturnAddress: &ret}, "Acme Warehouse", "Jane Doe"},
		{"return to the origin", ShipmentRequest{Origin: &origin, Destination: &dest, IsReturn: true}, "Jane Doe", "Acme Warehouse"},
		{"return to the return address", ShipmentRequest{Origin: &origin, Destination: &dest, ReturnAddress: &ret, IsReturn: true}, "Jane Doe", "Returns Dept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to := tt.req.Route()
			if from.Name != tt.from || to.Name != tt.to {
				t.Errorf("Route() = %s -> %s; want %s -> %s", from.Name, to.Name, tt.from, tt.to)
			}
			r := tt.req.Routed()
			if r.Origin.Name != tt.from || r.Destination.Name != tt.to {
				t.Errorf("Routed() = %s -> %s; want %s -> %s", r.Origin.Name, r.Destination.Name, tt.from, tt.to)
			}
			if tt.req.Origin.Name != "Acme Warehouse" || tt.req.Destination.Name != "Jane Doe" {
				t.Error("Routed changed the request it was called on")
			}
		})
	}
}
