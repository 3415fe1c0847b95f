package httpapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// example is the documented example of the operation's JSON request body (for text/csv, its
// text): its example, or the first of its named examples; nil for none.
func example(op map[string]any) any {
	if all := examples(op); len(all) > 0 {
		return all[0]
	}
	return nil
}

// examples are every documented example of the operation's request body: its example, or its
// named examples in the order of their names.
func examples(op map[string]any) []any {
	rb, _ := op["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	for _, media := range content {
		media := media.(map[string]any)
		if ex, ok := media["example"]; ok {
			return []any{ex}
		}
		named, _ := media["examples"].(map[string]any)
		var out []any
		for _, name := range slices.Sorted(maps.Keys(named)) {
			out = append(out, named[name].(map[string]any)["value"])
		}
		return out
	}
	return nil
}

// followLink is the body a link of the answer gives its target: the example, with each member of
// the link's requestBody set from the answer (a $response.body pointer) or as the link states it.
func followLink(t *testing.T, resp map[string]any, ex any, answer []byte) []byte {
	t.Helper()
	body, _ := jsonClone(ex).(map[string]any)
	var decoded any
	if err := json.Unmarshal(answer, &decoded); err != nil {
		t.Fatalf("link from an answer that is not JSON: %s", answer)
	}
	given, _ := resp["requestBody"].(map[string]any)
	for k, v := range given {
		expr, ok := v.(string)
		if ok && strings.HasPrefix(expr, "$response.body#/") {
			v = jsonPointer(decoded, strings.TrimPrefix(expr, "$response.body#/"))
			if v == nil {
				t.Fatalf("link member %s = %s: the answer has nothing there: %s", k, expr, answer)
			}
		}
		body[k] = v
	}
	b, _ := json.Marshal(body)
	return b
}

func jsonClone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// jsonPointer is the value at pointer (segments separated by /) in v, or nil.
func jsonPointer(v any, pointer string) any {
	for _, seg := range strings.Split(pointer, "/") {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// TestOpenAPIExamples: every request body the document describes (but the empty NoBody) carries
// an example the document's own schema accepts, and each example succeeds against a fresh server
// with the sample carriers, posted in the order a client's link chains would post them: where a
// body needs what only an earlier answer holds (an account's id, a label's tracking code), the
// document's link from that answer supplies it, and the test follows the link.
func TestOpenAPIExamples(t *testing.T) {
	e := newEnv(t)
	w := e.do("GET", "/openapi.json", "", nil)
	doc, err := decodeJSONNumbers(w.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	c := &contract{t: t, e: e, doc: doc.(map[string]any), ids: map[string]string{}}
	c.v = &schemaValidator{root: c.doc}
	ops := map[string]operation{}
	for _, o := range c.operations() {
		ops[o.method+" "+o.pattern] = o
	}

	// Every body with fields has an example its schema accepts (a batch's items each their own).
	posted := map[string]bool{}
	for route, o := range ops {
		schema := jsonBody(o.op)
		if schema == nil {
			if rb, ok := o.op["requestBody"].(map[string]any); ok && example(o.op) == nil && rb["content"] != nil {
				if _, csv := rb["content"].(map[string]any)["text/csv"]; csv {
					t.Errorf("%s: the CSV body has no example", route)
				}
			}
			continue
		}
		if ref, _ := schema.(map[string]any)["$ref"].(string); ref == "#/components/schemas/NoBody" {
			continue
		}
		posted[route] = false
		if example(o.op) == nil {
			t.Errorf("%s: the request body has no example", route)
			continue
		}
		for _, ex := range examples(o.op) {
			value, _ := decodeJSONNumbers(mustJSON(ex))
			for _, problem := range c.v.validate(schema, value, "") {
				t.Errorf("%s: example: %s", route, problem)
			}
			s := c.v.resolve(schema).(map[string]any)
			props, _ := s["properties"].(map[string]any)
			for name, p := range props {
				if p, _ := c.v.resolve(p).(map[string]any); p[itemsFailAlone] == true {
					items, _ := value.(map[string]any)[name].([]any)
					for i, it := range items {
						for _, problem := range c.v.validate(p["items"], it, fmt.Sprintf("$.%s[%d]", name, i)) {
							t.Errorf("%s: example: %s", route, problem)
						}
					}
				}
			}
		}
	}

	if t.Failed() {
		t.FailNow()
	}
	answers := map[string][]byte{} // route → the answer to its example
	targets := map[string]string{} // route → where its example went
	// post sends route's example (or body, when given) to target, and wants a 2xx.
	post := func(route, target string, body []byte, headers ...string) []byte {
		t.Helper()
		o, ok := ops[route]
		if !ok {
			t.Fatalf("%s is not documented", route)
		}
		if body == nil {
			ex := example(o.op)
			if s, ok := ex.(string); ok {
				body = []byte(s)
			} else {
				body = mustJSON(ex)
			}
		}
		a := c.send(o.op, o.method, target, body, headers...)
		if a.status < 200 || a.status > 299 {
			t.Fatalf("%s %s with the documented example %s: %d %s", o.method, target, body, a.status, a.body)
		}
		posted[route] = true
		answers[route] = []byte(a.body)
		targets[route] = target
		return []byte(a.body)
	}
	// via is the body the link named gives route's operation, from the answer of from.
	via := func(from, status, name, route string) []byte {
		t.Helper()
		o := ops[from]
		resp := c.v.resolve(o.op["responses"].(map[string]any)[status]).(map[string]any)
		links, _ := resp["links"].(map[string]any)
		l, ok := links[name].(map[string]any)
		if !ok || l["operationId"] != ops[route].op["operationId"] {
			t.Fatalf("%s %s: no link %s to %s", from, status, name, route)
		}
		return followLink(t, l, example(ops[route].op), answers[from])
	}
	field := func(answer []byte, pointer string) string {
		t.Helper()
		var v any
		json.Unmarshal(answer, &v)
		s, ok := jsonPointer(v, pointer).(string)
		if !ok {
			t.Fatalf("answer has no string at %s: %s", pointer, answer)
		}
		return s
	}

	card := example(ops["PUT /admin/carriers/{code}"].op).(map[string]any)
	code := card["code"].(string)
	service := card["services"].([]any)[0].(map[string]any)["code"].(string)
	post("PUT /admin/carriers/{code}", "/admin/carriers/"+code, nil)
	post("PUT /admin/carriers/{code}/services/{service}/prices", "/admin/carriers/"+code+"/services/"+service+"/prices", nil,
		"Content-Type", "text/csv")
	post("PUT /admin/rate_shopping_profiles/{key}", "/admin/rate_shopping_profiles/example", nil)

	shipment := post("POST /shipments", "/shipments", nil)
	id := field(shipment, "data/id")
	post("PATCH /shipments/{id}", "/shipments/"+id, nil)
	post("POST /shipments/{id}/rates/{rate_id}", "/shipments/"+id+"/rates/"+field(shipment, "data/shipping_rates/0/id"), nil)
	// The close-out first: it takes labels still PRE_TRANSIT.
	post("POST /manifests", "/manifests", via("POST /shipments/{id}/rates/{rate_id}", "200", "CreateManifest", "POST /manifests"))
	post("POST /admin/tracking_events", "/admin/tracking_events",
		via("POST /shipments/{id}/rates/{rate_id}", "200", "PostTrackingEvent", "POST /admin/tracking_events"))
	secret := decode[struct{ Data struct{ Secret string } }](t, e.do("POST", "/admin/carriers/POSTLINE/event_secret/rotate", "admin", nil), http.StatusOK)
	c.carrierSecret = secret.Data.Secret
	post("POST /carrier_events/{carrier}", "/carrier_events/POSTLINE", nil)
	other := post("POST /shipments", "/shipments", nil)
	post("PUT /shipments/{id}/cancel", "/shipments/"+field(other, "data/id")+"/cancel", nil)

	hook := post("POST /webhooks", "/webhooks", nil)
	post("PATCH /webhooks/{id}", "/webhooks/"+field(hook, "data/id"), nil)

	post("POST /webhook/custom-orders", "/webhook/custom-orders", nil)
	e.drain()
	orders := decode[struct{ Data []struct{ ID string } }](t, e.do("GET", "/orders", "admin", nil), http.StatusOK)
	if len(orders.Data) != 1 {
		t.Fatalf("the example order import made %d orders; want 1", len(orders.Data))
	}
	post("POST /orders/{id}/shipments", "/orders/"+orders.Data[0].ID+"/shipments", nil)
	batch := post("POST /batches", "/batches", nil)
	e.drain()
	var done struct {
		Data struct {
			Status string
			Items  []struct {
				Status string
				Errors json.RawMessage
			}
		}
	}
	json.Unmarshal(e.do("GET", "/batches/"+field(batch, "data/id"), "admin", nil).Body.Bytes(), &done)
	if done.Data.Status != "COMPLETED" || len(done.Data.Items) == 0 {
		t.Errorf("the example batch: %+v; want COMPLETED", done.Data)
	}
	for i, it := range done.Data.Items {
		if it.Status == "FAILED" {
			t.Errorf("the example batch's item %d FAILED: %s", i, it.Errors)
		}
	}

	account := post("POST /admin/accounts", "/admin/accounts", nil)
	acct := field(account, "data/id")
	post("POST /admin/accounts/{id}/tokens", "/admin/accounts/"+acct+"/tokens", nil)
	post("PATCH /admin/accounts/{id}/billing_profile", "/admin/accounts/"+acct+"/billing_profile", nil)
	invoice := post("POST /admin/billing/invoices", "/admin/billing/invoices",
		via("POST /admin/accounts", "201", "OpenDraftInvoice", "POST /admin/billing/invoices"))
	post("POST /admin/billing/invoices/{id}/line_items", "/admin/billing/invoices/"+field(invoice, "data/id")+"/line_items", nil)

	// The other named examples of a body, each where its first went.
	for route, target := range targets {
		for _, ex := range examples(ops[route].op)[1:] {
			post(route, target, mustJSON(ex))
		}
	}

	for route, done := range posted {
		if !done {
			t.Errorf("%s: its example is never posted: add it to TestOpenAPIExamples", route)
		}
	}
	if len(posted) < 15 {
		t.Errorf("only %d examples", len(posted))
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestOpenAPIRules: each rule the server enforces is one the document states. Each case sends a
// refused value (in the operation's documented example, or as a query parameter) and wants the
// server's 400 with its code, naming the field or parameter; and the document refuses the same
// value: the operation's schema rejects the body (a batch item: the item schema rejects the
// item), the parameter's schema the value, or, where no keyword can state the rule (a date not
// in the past), the field's description names the rule's code.
func TestOpenAPIRules(t *testing.T) {
	c := newContract(t)
	ops := map[string]operation{}
	for _, o := range c.operations() {
		ops[o.method+" "+o.pattern] = o
	}
	la := map[string]any{"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"}
	customs := func(items []any, signer string) map[string]any {
		return map[string]any{"customs_items": items, "customs_signer": signer}
	}
	item := map[string]any{"description": "T-shirt", "quantity": 1, "value": 10, "weight": 5, "weight_unit": "OZ", "origin_country": "US"}
	hsItem := with(item, "harmonized_system_code", "6109.10")
	toronto := map[string]any{"name": "Marie Tremblay", "street1": "100 Queen St W", "city": "Toronto", "state": "ON", "zip": "M5H 2N2", "country": "CA"}
	for _, tc := range []struct {
		name, route string
		query       string         // a query string; or, without it, the body field at path set to value
		with        map[string]any // members set in the example first
		path        []any
		value       any
		code, field string // the error's code, and the field (or parameter) it names
		fieldCode   string // the field error's code, where the rule has its own
		described   bool   // no keyword fits: the field's description names fieldCode
	}{
		{name: "page beyond 32 bits", route: "GET /shipments", query: "page=2147483648", code: "invalid_parameter", field: "page"},
		{name: "page with first", route: "GET /shipments", query: "page=1&first=10", code: "pagination_conflict", field: "page,first"},
		{name: "page_size with after", route: "GET /shipments", query: "page_size=10&after=x", code: "pagination_conflict", field: "page_size,after"},
		{name: "first with last", route: "GET /shipments", query: "first=1&last=1", code: "pagination_conflict", field: "first,last"},
		{name: "after with before", route: "GET /shipments", query: "after=x&before=x", code: "pagination_conflict", field: "after,before"},
		{name: "no customs items", route: "POST /shipments", path: []any{"customs_info"}, value: customs([]any{}, "Jane Doe"),
			code: "validation_failed", field: "customs_info.customs_items"},
		{name: "customs signer with a control character", route: "POST /shipments", path: []any{"customs_info"},
			value: customs([]any{item}, "Jane\x07Doe"), code: "validation_failed", field: "customs_info.customs_signer"},
		{name: "ship_date in the past", route: "POST /shipments", path: []any{"ship_date"}, value: "2026-11-21",
			code: "validation_failed", field: "ship_date", fieldCode: "in_past", described: true},
		{name: "ship_date over a year ahead", route: "POST /shipments", path: []any{"ship_date"}, value: "2027-11-23",
			code: "validation_failed", field: "ship_date", fieldCode: "too_far", described: true},
		{name: "insurance in part cents", route: "POST /shipments/{id}/rates/{rate_id}", path: []any{"insurance_amount"}, value: 10.005,
			code: "validation_failed", field: "insurance_amount"},
		{name: "insurance in part cents, query", route: "POST /shipments/{id}/rates/{rate_id}", query: "insurance_amount=10.005",
			code: "invalid_parameter", field: "insurance_amount"},
		{name: "empty bill-to address", route: "PATCH /admin/accounts/{id}/billing_profile", path: []any{"bill_to_address"}, value: map[string]any{},
			code: "validation_failed", field: "bill_to_address.street1"},
		{name: "bill-to name with a control character", route: "PATCH /admin/accounts/{id}/billing_profile", path: []any{"bill_to_name"},
			value: "Acme\x01Inc", code: "validation_failed", field: "bill_to_name"},
		{name: "batch item of neither kind", route: "POST /batches", path: []any{"shipments", 0}, value: map[string]any{},
			code: "validation_failed", field: "origin"},
		{name: "batch item without a destination", route: "POST /batches", path: []any{"shipments", 0},
			value: map[string]any{"origin": la, "parcel": map[string]any{"length": 1, "width": 1, "height": 1, "length_unit": "IN", "weight": 1, "weight_unit": "OZ"}},
			code:  "validation_failed", field: "destination"},
		{name: "batch item with an order and a destination", route: "POST /batches", path: []any{"shipments", 0},
			value: map[string]any{"order_id": "1001", "origin": la, "destination": la}, code: "validation_failed", field: "destination"},
		{name: "batch item with additional but no order", route: "POST /batches", path: []any{"shipments", 0, "additional"}, value: true,
			code: "validation_failed", field: "additional"},
		{name: "zero fee", route: "POST /admin/billing/invoices/{id}/line_items", path: []any{"amount_cents"}, value: 0,
			code: "validation_failed", field: "amount_cents"},
		{name: "reference with a control character", route: "POST /shipments", path: []any{"custom_reference_1"}, value: "PO\x1b1",
			code: "validation_failed", field: "custom_reference_1"},
		{name: "reference with NUL", route: "PATCH /shipments/{id}", path: []any{"custom_reference_2"}, value: "PO\x001",
			code: "validation_failed", field: "custom_reference_2"},
		{name: "reference with DEL", route: "PATCH /shipments/{id}", path: []any{"custom_reference_1"}, value: "PO\x7f1",
			code: "validation_failed", field: "custom_reference_1"},
		{name: "address name with a control character", route: "POST /shipments", path: []any{"origin", "name"}, value: "Acme\nWarehouse",
			code: "validation_failed", field: "origin.name"},
		{name: "brand with a control character", route: "POST /shipments", path: []any{"brand"}, value: "Ac\tme",
			code: "validation_failed", field: "brand"},
		{name: "account brand with a control character", route: "POST /admin/accounts", path: []any{"brand"}, value: "Ac\x02me",
			code: "validation_failed", field: "brand"},
		{name: "empty carrier code", route: "PUT /admin/rate_shopping_profiles/{key}", path: []any{"carriers"}, value: []any{""},
			code: "validation_failed", field: "carriers.0", fieldCode: "unknown_carrier"},
		{name: "carrier code with a control character", route: "PUT /admin/rate_shopping_profiles/{key}", path: []any{"carriers"},
			value: []any{"POSTLINE\x01"}, code: "validation_failed", field: "carriers.0", fieldCode: "unknown_carrier"},
		{name: "international without customs_info", route: "POST /shipments", with: map[string]any{"destination": toronto},
			path: []any{"customs_info"}, value: nil, code: "validation_failed", field: "customs_info", fieldCode: "required", described: true},
		{name: "country outside ISO 3166", route: "POST /shipments", path: []any{"destination", "country"}, value: "XX",
			code: "validation_failed", field: "destination.country", fieldCode: "invalid", described: true},
		{name: "province missing in Canada", route: "POST /shipments", with: map[string]any{"customs_info": customs([]any{hsItem}, "Jane Doe")},
			path: []any{"destination"}, value: without(toronto, "state"), code: "validation_failed", field: "destination.state",
			fieldCode: "required", described: true},
		{name: "postal code not Canada's", route: "POST /shipments", with: map[string]any{"customs_info": customs([]any{hsItem}, "Jane Doe")},
			path: []any{"destination"}, value: with(toronto, "zip", "12345"), code: "validation_failed", field: "destination.zip",
			fieldCode: "invalid", described: true},
		{name: "HS code missing abroad", route: "POST /shipments", with: map[string]any{"destination": toronto},
			path: []any{"customs_info"}, value: customs([]any{item}, "Jane Doe"), code: "validation_failed",
			field: "customs_info.customs_items[0].harmonized_system_code", fieldCode: "required", described: true},
		{name: "HS code not digits", route: "POST /shipments", path: []any{"customs_info"},
			value: customs([]any{with(item, "harmonized_system_code", "61A9.10")}, "Jane Doe"), code: "validation_failed",
			field: "customs_info.customs_items[0].harmonized_system_code"},
		{name: "customs description too long abroad", route: "POST /shipments", with: map[string]any{"destination": toronto},
			path: []any{"customs_info"}, value: customs([]any{with(hsItem, "description", strings.Repeat("T", 101))}, "Jane Doe"),
			code: "validation_failed", field: "customs_info.customs_items[0].description", fieldCode: "too_long", described: true},
		{name: "customs items heavier than the parcel", route: "POST /shipments", with: map[string]any{"destination": toronto},
			path: []any{"customs_info"}, value: customs([]any{with(hsItem, "weight", 100)}, "Jane Doe"), code: "validation_failed",
			field: "customs_info.customs_items", fieldCode: "too_heavy", described: true},
		{name: "no AES ITN over $2,500", route: "POST /shipments", with: map[string]any{"destination": toronto},
			path: []any{"customs_info"}, value: customs([]any{with(hsItem, "value", 3000)}, "Jane Doe"), code: "validation_failed",
			field: "customs_info.aes_itn", fieldCode: "required", described: true},
		{name: "AES ITN malformed", route: "POST /shipments", path: []any{"customs_info"},
			value: with(customs([]any{item}, "Jane Doe"), "aes_itn", "AES 123"), code: "validation_failed", field: "customs_info.aes_itn"},
		{name: "country zone for the US", route: "PUT /admin/carriers/{code}", path: []any{"country_zones"}, value: map[string]any{"US": 1},
			code: "validation_failed", field: "country_zones.US"},
		{name: "country zone key in lower case", route: "PUT /admin/carriers/{code}", path: []any{"country_zones"}, value: map[string]any{"ca": 1},
			code: "validation_failed", field: "country_zones.ca"},
		{name: "DAS ZIP listed twice", route: "PUT /admin/carriers/{code}", path: []any{"das_zips"}, value: []any{"10001", "10001"},
			code: "validation_failed", field: "das_zips[1]", fieldCode: "duplicate"},
		{name: "EDAS ZIP listed twice", route: "PUT /admin/carriers/{code}", path: []any{"edas_zips"}, value: []any{"10001", "10002", "10001"},
			code: "validation_failed", field: "edas_zips[2]", fieldCode: "duplicate"},
		{name: "zone chart destinations overlap", route: "PUT /admin/carriers/{code}", path: []any{"zone_chart"},
			value: []any{map[string]any{"origin_zip3": "900", "dest_zip3": "100-105", "zone": 5}, map[string]any{"origin_zip3": "900", "dest_zip3": "103", "zone": 6}},
			code:  "validation_failed", field: "zone_chart[1].dest_zip3", fieldCode: "overlap", described: true},
		{name: "order shipment without an origin", route: "POST /orders/{id}/shipments", path: []any{"origin"}, value: nil,
			code: "validation_failed", field: "origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, ok := ops[tc.route]
			if !ok {
				t.Fatalf("%s is not documented", tc.route)
			}
			target, _ := c.target(o.pattern)
			var a answer
			var body []byte
			if tc.query != "" {
				a = c.send(o.op, o.method, target+"?"+tc.query, nil)
			} else {
				f := bodyField{path: tc.path}
				base := jsonClone(example(o.op)).(map[string]any)
				for k, v := range tc.with {
					base[k] = v
				}
				if tc.value == nil {
					body = deleteField(base, tc.path)
				} else {
					body = f.within(base, tc.value)
				}
				if tc.path[0] == "shipments" {
					f.item = 2 // a batch item is judged alone
				}
				a = f.judged(c.send(o.op, o.method, target, body))
			}
			// The server refuses it.
			named := a.Errors.Parameter != "" && strings.Contains(tc.field, a.Errors.Parameter) ||
				a.names(tc.field, "") || tc.code == "pagination_conflict"
			if a.status != http.StatusBadRequest || a.Errors.Code != tc.code || !named {
				t.Fatalf("%s %s %s: %d %.400s; want 400 %s naming %s", o.method, target+"?"+tc.query, body, a.status, a.body, tc.code, tc.field)
			}
			if tc.fieldCode != "" && !fieldHasCode(a.body, tc.field, tc.fieldCode) {
				t.Errorf("%s: %.400s; want field %s with code %s", tc.name, a.body, tc.field, tc.fieldCode)
			}
			// The document refuses it too.
			if problem := c.documentRefuses(o, tc.query, tc.path, body, tc.field, tc.fieldCode, tc.described); problem != "" {
				t.Errorf("%s %s: the server refuses it (%s), yet the document %s", o.method, o.pattern, a.Errors.Code, problem)
			}
		})
	}
}

// documentRefuses returns "" when the document refuses what a rule case sends, else what it
// does instead.
func (c *contract) documentRefuses(o operation, query string, path []any, body []byte, field, fieldCode string, described bool) string {
	if query != "" {
		q, _ := url.ParseQuery(query)
		if len(q) > 1 {
			// Two parameters that do not mix: their descriptions and the 400 answer say so.
			for name := range q {
				for _, p := range c.parameters(o.op, "query") {
					if d, _ := p["description"].(string); p["name"] == name && !strings.Contains(d, "pagination_conflict") {
						return fmt.Sprintf("does not say on %s that it does not mix (pagination_conflict)", name)
					}
				}
			}
			resp := c.v.resolve(o.op["responses"].(map[string]any)["400"]).(map[string]any)
			b, _ := json.Marshal(resp)
			if !strings.Contains(string(b), `"code":"pagination_conflict"`) {
				return "documents no 400 pagination_conflict answer"
			}
			return ""
		}
		for name, vals := range q {
			for _, p := range c.parameters(o.op, "query") {
				if p["name"] == name {
					if len(c.v.validate(p["schema"], json.Number(vals[0]), "")) == 0 {
						return fmt.Sprintf("takes %s=%s", name, vals[0])
					}
					return ""
				}
			}
		}
		return "documents no such parameter"
	}
	schema := jsonBody(o.op)
	value, _ := decodeJSONNumbers(body)
	var problems []string
	if path[0] == "shipments" {
		items := c.v.resolve(c.v.resolve(schema).(map[string]any)["properties"].(map[string]any)["shipments"]).(map[string]any)["items"]
		problems = c.v.validate(items, value.(map[string]any)["shipments"].([]any)[0], "")
	} else {
		problems = c.v.validate(schema, value, "")
	}
	if !described {
		if len(problems) == 0 {
			return fmt.Sprintf("takes %s", body)
		}
		return ""
	}
	// The field the answer names (customs_info.customs_items[0].description), step by step.
	var steps []any
	for _, seg := range strings.Split(strings.NewReplacer("[", ".", "]", "").Replace(field), ".") {
		if i, err := strconv.Atoi(seg); err == nil {
			steps = append(steps, i)
		} else {
			steps = append(steps, seg)
		}
	}
	var raw any = schema
	for _, step := range steps {
		s := c.v.objectOf(raw)
		if _, ok := step.(int); ok {
			raw = s["items"]
			continue
		}
		props, _ := s["properties"].(map[string]any)
		if raw = props[step.(string)]; raw == nil {
			return "has no field " + field
		}
	}
	// The description beside a $ref, or the referred schema's.
	d, _ := raw.(map[string]any)["description"].(string)
	if s, _ := c.v.resolve(raw).(map[string]any); s != nil {
		d2, _ := s["description"].(string)
		d += " " + d2
	}
	if !strings.Contains(d, "code "+fieldCode) {
		return fmt.Sprintf("does not name code %s in %s's description", fieldCode, field)
	}
	return ""
}

// fieldHasCode reports whether an error answer's fields give field the code.
func fieldHasCode(body, field, code string) bool {
	var a struct {
		Errors struct {
			Fields []struct{ Field, Code string }
		}
	}
	json.Unmarshal([]byte(body), &a)
	norm := strings.NewReplacer("[", ".", "]", "")
	for _, f := range a.Errors.Fields {
		if norm.Replace(f.Field) == norm.Replace(field) && f.Code == code {
			return true
		}
	}
	return false
}

// with is a copy of m with k set to v.
func with(m map[string]any, k string, v any) map[string]any {
	out := jsonClone(m).(map[string]any)
	out[k] = v
	return out
}

// without is a copy of m without k.
func without(m map[string]any, k string) map[string]any {
	out := jsonClone(m).(map[string]any)
	delete(out, k)
	return out
}

// deleteField is v (a decoded body) without the member at path.
func deleteField(v any, path []any) []byte {
	doc := jsonClone(v)
	node := doc
	for i, step := range path {
		m, ok := node.(map[string]any)
		if !ok {
			break
		}
		if i == len(path)-1 {
			delete(m, step.(string))
			break
		}
		node = m[step.(string)]
	}
	return mustJSON(doc)
}

// TestOpenAPIBatchItemKinds: a batch item that names an order takes the fields of POST
// /orders/{id}/shipments beside order_id, and one that does not is a POST /shipments body: the
// document's two alternatives are those schemas, so neither drifts from the endpoint it copies.
func TestOpenAPIBatchItemKinds(t *testing.T) {
	doc := openAPIDoc(t)
	v := &schemaValidator{root: doc}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	item := schemas["BatchItemCreate"].(map[string]any)
	want := []any{map[string]any{"$ref": "#/components/schemas/BatchOrderItemCreate"}, map[string]any{"$ref": "#/components/schemas/ShipmentCreate"}}
	if !jsonEqual(item["oneOf"], want) {
		t.Fatalf("BatchItemCreate oneOf %v; want %v", item["oneOf"], want)
	}
	order := v.resolve(want[0]).(map[string]any)["properties"].(map[string]any)
	shipment := schemas["OrderShipmentCreate"].(map[string]any)["properties"].(map[string]any)
	for name, p := range shipment {
		q, ok := order[name]
		if !ok {
			t.Errorf("BatchOrderItemCreate lacks %s of OrderShipmentCreate", name)
			continue
		}
		// The descriptions may differ (additional says what it does in a batch); the rules not.
		a, b := jsonClone(p).(map[string]any), jsonClone(q).(map[string]any)
		delete(a, "description")
		delete(b, "description")
		if !jsonEqual(a, b) {
			t.Errorf("BatchOrderItemCreate.%s = %v; OrderShipmentCreate's is %v", name, b, a)
		}
	}
	for name := range order {
		if _, ok := shipment[name]; !ok && name != "order_id" {
			t.Errorf("BatchOrderItemCreate has %s, which OrderShipmentCreate has not", name)
		}
	}
}
