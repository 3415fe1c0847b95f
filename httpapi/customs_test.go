package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping/labeldoc"
)

// TestLabelDocumentCustomsMarker: the label of a shipment with customs_info is drawn with the
// customs declaration marker; one without, not.
func TestLabelDocumentCustomsMarker(t *testing.T) {
	e := newEnv(t)
	customs := `, "customs_info": {"customs_signer": "Jane Doe", "customs_items": [{"description": "Book", "origin_country": "GB",
		"quantity": 1, "value": 12, "weight": 1, "weight_unit": "LB"}]}}`
	for _, tt := range []struct {
		name string
		body string
		want bool
	}{
		{"with customs_info", strings.TrimSuffix(shipmentBody("CHEAPEST", "PDF"), "}") + customs, true},
		{"without", shipmentBody("CHEAPEST", "PDF"), false},
	} {
		s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", tt.body), http.StatusCreated)
		bought := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
		l, sh, err := e.db.LabelDocument(context.Background(), e.accounts["acme"].ID, bought.Data.ShippingLabel.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := labeldoc.For(sh, l, nil).Customs; got != tt.want {
			t.Errorf("%s: label document Customs = %v; want %v", tt.name, got, tt.want)
		}
	}
}
