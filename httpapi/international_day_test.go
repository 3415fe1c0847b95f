package httpapi

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping/tooltest"
)

// intlShipment is a shipment abroad as the test sends it and what its documents must show.
type intlShipment struct {
	city, destination, customs string
	form                       string   // the declaration after the label: "CN 22" or "CN 23"
	country                    string   // the manifest's to_country
	reads                      []string // what the commercial invoice must read
}

var intlShipments = []intlShipment{
	{
		city:        "Toronto",
		destination: `{"name": "Jane Roe", "street1": "1 Front St W", "city": "Toronto", "state": "ON", "zip": "M5V 2T6", "country": "CA"}`,
		customs: `{"customs_signer": "Acme Shipping", "customs_items": [
			{"description": "Cotton T-shirt", "harmonized_system_code": "6109.10.0012", "origin_country": "US", "quantity": 2, "value": 40, "weight": 8, "weight_unit": "OZ"},
			{"description": "Wool scarf", "harmonized_system_code": "6117.10", "origin_country": "PT", "quantity": 1, "value": 25.5, "weight": 4, "weight_unit": "OZ"}]}`,
		form: "CN 22", country: "CA",
		reads: []string{"Cotton T-shirt", "6109100012", "40.00", "Wool scarf", "611710", "25.50", "65.50", "DAP", "NOEEI 30.37(a)", "Acme Shipping", "Canada (CA)"},
	},
	{
		city:        "London",
		destination: `{"name": "John Bull", "street1": "10 Downing St", "city": "London", "zip": "SW1A 2AA", "country": "GB"}`,
		customs: `{"customs_signer": "Acme Shipping", "contents_type": "GIFT", "customs_items": [
			{"description": "Hardcover book", "harmonized_system_code": "4901.99", "origin_country": "GB", "quantity": 3, "value": 60, "weight": 18, "weight_unit": "OZ"}]}`,
		form: "CN 22", country: "GB",
		reads: []string{"Hardcover book", "490199", "60.00", "GIFT", "DAP", "NOEEI 30.37(a)", "United Kingdom"},
	},
	{
		city:        "Tokyo",
		destination: `{"name": "Taro Yamada", "street1": "1-1 Chiyoda", "city": "Chiyoda-ku", "state": "Tokyo", "zip": "100-0001", "country": "JP"}`,
		customs: `{"customs_signer": "Acme Shipping", "aes_itn": "AES X20261122123456", "customs_items": [
			{"description": "Camera lens 50mm", "harmonized_system_code": "9002.11", "origin_country": "JP", "quantity": 2, "value": 3000, "weight": 24, "weight_unit": "OZ"},
			{"description": "Lens cap", "harmonized_system_code": "9002.90", "origin_country": "CN", "quantity": 2, "value": 10, "weight": 2, "weight_unit": "OZ"}]}`,
		form: "CN 23", country: "JP",
		reads: []string{"Camera lens 50mm", "900211", "3000.00", "Lens cap", "900290", "10.00", "3010.00", "DAP", "AES X20261122123456", "Japan (JP)"},
	},
}

// TestInternationalDay: a shipment from Los Angeles to Toronto, London and Tokyo is quoted by
// the default profile, bought, labelled with its CN22 or CN23 after the label, invoiced with a
// commercial invoice pdftotext reads every item of, manifested (to_country says where) and
// billed once the tracking feed delivers it. (testdata/international/day.txtar replays the same
// answers on SQLite and PostgreSQL.)
func TestInternationalDay(t *testing.T) {
	e := newEnv(t)
	type label struct {
		ID                   string  `json:"id"`
		TrackingCode         string  `json:"tracking_code"`
		Carrier              string  `json:"carrier"`
		LabelURL             string  `json:"label_url"`
		CommercialInvoiceURL *string `json:"commercial_invoice_url"`
	}
	type answer struct {
		Data struct {
			ID            string `json:"id"`
			ShippingRates []struct {
				ID           string         `json:"id"`
				RateMetadata map[string]any `json:"rate_metadata"`
			} `json:"shipping_rates"`
			ShippingLabel *label `json:"shipping_label"`
		} `json:"data"`
	}
	labels := map[string]label{} // by city
	carriers := map[string]bool{}
	for _, s := range intlShipments {
		body := `{"origin": {"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
			"destination": ` + s.destination + `,
			"parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": ` + map[string]string{"Toronto": "20", "London": "24", "Tokyo": "80"}[s.city] + `, "weight_unit": "OZ"},
			"rate_shopping_strategy": "CHEAPEST", "customs_info": ` + s.customs + `}`
		created := decode[answer](t, e.do("POST", "/shipments", "all", body), http.StatusCreated)
		if len(created.Data.ShippingRates) == 0 || created.Data.ShippingRates[0].RateMetadata["country_zone"] == nil {
			t.Fatalf("%s: rates %+v; want a rate with rate_metadata.country_zone", s.city, created.Data.ShippingRates)
		}
		bought := decode[answer](t, e.do("POST", "/shipments/"+created.Data.ID+"/rates/"+created.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
		l := *bought.Data.ShippingLabel
		if l.CommercialInvoiceURL == nil {
			t.Fatalf("%s: commercial_invoice_url = null; want the URL of its commercial invoice", s.city)
		}
		labels[s.city], carriers[l.Carrier] = l, true

		// The stored label and the label list say the same.
		got := decode[struct{ Data label }](t, e.do("GET", "/shipping_labels/"+l.ID, "all", nil), http.StatusOK).Data
		list := decode[struct{ Data []label }](t, e.do("GET", "/shipping_labels?tracking_code="+l.TrackingCode, "all", nil), http.StatusOK).Data
		if got.CommercialInvoiceURL == nil || *got.CommercialInvoiceURL != *l.CommercialInvoiceURL ||
			len(list) != 1 || list[0].CommercialInvoiceURL == nil || *list[0].CommercialInvoiceURL != *l.CommercialInvoiceURL {
			t.Errorf("%s: GET and list give commercial_invoice_url %v and %v; want %s", s.city, got.CommercialInvoiceURL, list, *l.CommercialInvoiceURL)
		}

		// The label, then its declaration.
		w := e.fetch(t, l.LabelURL, nil)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: label_url: %d %s", s.city, w.Code, w.Body)
		}
		pages := tooltest.PDFPages(t, w.Body.Bytes())
		if len(pages) < 2 || strings.Contains(pages[0], s.form) {
			t.Fatalf("%s: label PDF pages %q; want the label, then its %s", s.city, pages, s.form)
		}
		for i, p := range pages[1:] {
			if !strings.Contains(p, s.form) || !strings.Contains(p, "CUSTOMS DECLARATION") || !strings.Contains(p, l.TrackingCode) {
				t.Errorf("%s: label PDF page %d = %q; want the %s", s.city, i+2, p, s.form)
			}
		}

		// The commercial invoice.
		w = e.fetch(t, *l.CommercialInvoiceURL, nil)
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/pdf" {
			t.Fatalf("%s: commercial_invoice_url: %d %s %s", s.city, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
		text := strings.Join(tooltest.PDFPages(t, w.Body.Bytes()), " ")
		for _, want := range append([]string{"COMMERCIAL INVOICE", l.TrackingCode, "Acme Warehouse", "USD", "2026-11-22"}, s.reads...) {
			if !strings.Contains(text, want) {
				t.Errorf("%s: commercial invoice reads %q; want %q in it", s.city, text, want)
			}
		}
	}

	// A domestic label has no commercial invoice, even under a good signature.
	home := e.createShipment(t, "CHEAPEST", "PDF")
	bought := decode[answer](t, e.do("POST", "/shipments/"+home.Data.ID+"/rates/"+home.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
	if u := bought.Data.ShippingLabel.CommercialInvoiceURL; u != nil {
		t.Errorf("domestic label: commercial_invoice_url = %q; want null", *u)
	}
	if w := e.fetch(t, e.api.commercialInvoiceURL(bought.Data.ShippingLabel.ID), nil); w.Code != http.StatusNotFound {
		t.Errorf("domestic label's commercial invoice: %d; want 404", w.Code)
	}

	// Manifested like any other label: to_country says where.
	countries := map[string]string{} // tracking code → to_country
	for carrier := range carriers {
		m := decode[struct {
			Data struct {
				CSVURL string `json:"csv_url"`
			}
		}](t, e.do("POST", "/manifests", "all", `{"carrier": "`+carrier+`"}`), http.StatusCreated)
		rows, err := csv.NewReader(e.fetch(t, m.Data.CSVURL, nil).Body).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("manifest CSV of %s: %v %v", carrier, rows, err)
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		for _, r := range rows[1:] {
			countries[r[col["tracking_code"]]] = r[col["to_country"]]
		}
	}
	for _, s := range intlShipments {
		if got := countries[labels[s.city].TrackingCode]; got != s.country {
			t.Errorf("%s: manifest to_country = %q; want %q", s.city, got, s.country)
		}
	}

	// Billed when delivered.
	for _, s := range intlShipments {
		for _, ev := range []struct{ status, at string }{{"IN_TRANSIT", "2026-11-22T09:00:00Z"}, {"DELIVERED", "2026-11-22T18:00:00Z"}} {
			e.do("POST", "/admin/tracking_events", "admin", `{"tracking_code": "`+labels[s.city].TrackingCode+`", "status": "`+ev.status+
				`", "message": "`+ev.status+`", "occurred_at": "`+ev.at+`"}`)
		}
	}
	invoices := decode[struct{ Data []struct{ ID string } }](t, e.do("GET", "/billing/invoices", "all", nil), http.StatusOK).Data
	billed := map[string]int{}
	for _, inv := range invoices {
		items := decode[struct {
			Data []struct {
				Type         string `json:"type"`
				TrackingCode string `json:"tracking_code"`
			}
		}](t, e.do("GET", "/billing/invoices/"+inv.ID+"/line_items", "all", nil), http.StatusOK).Data
		for _, it := range items {
			if it.Type == "POSTAGE" {
				billed[it.TrackingCode]++
			}
		}
	}
	for _, s := range intlShipments {
		if n := billed[labels[s.city].TrackingCode]; n != 1 {
			t.Errorf("%s: %d POSTAGE line items; want 1", s.city, n)
		}
	}
}
