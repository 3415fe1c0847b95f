package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// example is the documented example of the operation's JSON request body (for text/csv, its
// text), or nil.
func example(op map[string]any) any {
	rb, _ := op["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	for _, media := range content {
		if ex, ok := media.(map[string]any)["example"]; ok {
			return ex
		}
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
		ex := example(o.op)
		if ex == nil {
			t.Errorf("%s: the request body has no example", route)
			continue
		}
		value, _ := decodeJSONNumbers(mustJSON(ex))
		for _, problem := range c.v.validate(schema, value, "") {
			t.Errorf("%s: example: %s", route, problem)
		}
		if s := c.v.resolve(schema).(map[string]any); s != nil {
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

	answers := map[string][]byte{} // route → the answer to its example
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
