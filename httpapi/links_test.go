package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestLabelURLOnEveryAnswer: every answer that carries a label carries its label_url under the
// API's base URL, whichever endpoint produced it (the store leaves URLs to the API).
func TestLabelURLOnEveryAnswer(t *testing.T) {
	e := newEnv(t)
	s := e.createShipment(t, "CHEAPEST", "PDF")
	path := "/shipments/" + s.Data.ID
	bought := decode[shipmentAnswer](t, e.do("POST", path+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
	// label_url is the label's capability URL (documents_test.go checks that it opens).
	want := bought.Data.ShippingLabel.LabelURL
	if prefix := e.url + "/documents/shipping_labels/" + bought.Data.ShippingLabel.ID + "/"; !strings.HasPrefix(want, prefix) || len(want) < len(prefix)+43 {
		t.Fatalf("label_url = %q; want %s followed by a signature", want, prefix)
	}

	type labelOnly struct {
		Data struct {
			LabelURL string `json:"label_url"`
		} `json:"data"`
	}
	type labelList struct {
		Data []struct {
			LabelURL string `json:"label_url"`
		} `json:"data"`
	}
	type shipmentList struct {
		Data []struct {
			ShippingLabel struct {
				LabelURL string `json:"label_url"`
			} `json:"shipping_label"`
		} `json:"data"`
	}
	got := map[string]string{
		"buy":                 bought.Data.ShippingLabel.LabelURL,
		"GET shipment":        decode[shipmentAnswer](t, e.do("GET", path, "all", nil), http.StatusOK).Data.ShippingLabel.LabelURL,
		"PATCH shipment":      decode[shipmentAnswer](t, e.do("PATCH", path, "all", `{"custom_reference_1":"x"}`), http.StatusOK).Data.ShippingLabel.LabelURL,
		"GET shipments":       decode[shipmentList](t, e.do("GET", "/shipments", "all", nil), http.StatusOK).Data[0].ShippingLabel.LabelURL,
		"GET shipments first": decode[shipmentList](t, e.do("GET", "/shipments?first=5", "all", nil), http.StatusOK).Data[0].ShippingLabel.LabelURL,
		"GET label":           decode[labelOnly](t, e.do("GET", "/shipping_labels/"+bought.Data.ShippingLabel.ID, "all", nil), http.StatusOK).Data.LabelURL,
		"GET labels":          decode[labelList](t, e.do("GET", "/shipping_labels", "all", nil), http.StatusOK).Data[0].LabelURL,
		"cancel":              decode[shipmentAnswer](t, e.do("PUT", path+"/cancel", "all", nil), http.StatusOK).Data.ShippingLabel.LabelURL,
	}
	for endpoint, url := range got {
		if url != want {
			t.Errorf("%s: label_url = %q; want %q", endpoint, url, want)
		}
	}
	if !strings.HasPrefix(want, "https://waybill.test/") {
		t.Errorf("label_url %q is not under the base URL", want)
	}
}
