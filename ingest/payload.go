package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/waybill/waybill/shipping"
)

// MaxBody is the largest order payload accepted, in bytes.
const MaxBody = 1 << 20

// maxIDLength bounds the payload's order id.
const maxIDLength = 255

var errNotObject = errors.New("order payload must be a JSON object")

// PeekOrderID checks that body is a JSON object of valid UTF-8 in which no object holds a
// member name twice (duplicate keys are malformed JSON; a signed body must not read
// one way here and another way to its sender), and returns its id (a string, or a number as
// written), or nil when it has no usable id. It is what the endpoint checks before committing
// a body; everything else waits for the worker. It reads the id as ParseOrder does: the member
// named exactly "id".
func PeekOrderID(body []byte) (*string, error) {
	if !utf8.Valid(body) {
		return nil, errors.New("order payload is not valid UTF-8")
	}
	if !json.Valid(body) {
		return nil, syntaxError(body)
	}
	obj := bytes.TrimSpace(body)
	if obj[0] != '{' {
		return nil, errNotObject
	}
	if key, dup := duplicateKey(obj); dup {
		return nil, fmt.Errorf("duplicate key %q", key)
	}
	if HasLoneSurrogate(obj) {
		return nil, ErrLoneSurrogate
	}
	id, ok := idValue(member(obj, "id"))
	if !ok {
		return nil, nil
	}
	return &id, nil
}

// syntaxError says what is wrong with a body json.Valid refused.
func syntaxError(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if dec.Decode(&v) == nil {
		return errors.New("unexpected data after the JSON value")
	}
	return errors.New("order payload is not well-formed JSON")
}

// member returns the value of obj's last member named key, as written, or nil. obj is a valid
// JSON object (json.Valid), so the scan needs no checks of its own.
func member(obj []byte, key string) []byte {
	var found []byte
	i := 1 // past the '{'
	for {
		i = skipSpace(obj, i)
		if obj[i] == '}' {
			return found
		}
		k := obj[i:valueEnd(obj, i)]
		i = skipSpace(obj, skipSpace(obj, i+len(k))+1) // past the ':'
		end := valueEnd(obj, i)
		if keyIs(k, key) {
			found = obj[i:end]
		}
		if i = skipSpace(obj, end); obj[i] == ',' {
			i++
		}
	}
}

// ErrLoneSurrogate refuses JSON text that HasLoneSurrogate finds.
var ErrLoneSurrogate = errors.New("a string escapes half of a UTF-16 surrogate pair")

// HasLoneSurrogate reports whether JSON text b, which json.Valid accepts, escapes half of a
// UTF-16 surrogate pair: \ud800 without the low half that must follow, or a low half alone.
// Decoders read either as U+FFFD, so different texts ("A\ud800", "A\udbff") would read as
// one; the import and the API refuse them as malformed JSON, as they refuse invalid UTF-8.
func HasLoneSurrogate(b []byte) bool {
	// In valid JSON every backslash begins an escape, inside a string.
	for i := bytes.IndexByte(b, '\\'); i >= 0; {
		width := 2
		if b[i+1] == 'u' {
			width = 6
			switch r := hex4(b[i+2:]); {
			case 0xDC00 <= r && r <= 0xDFFF:
				return true
			case 0xD800 <= r && r <= 0xDBFF:
				if len(b) < i+12 || b[i+6] != '\\' || b[i+7] != 'u' || hex4(b[i+8:]) < 0xDC00 || hex4(b[i+8:]) > 0xDFFF {
					return true
				}
				width = 12
			}
		}
		j := bytes.IndexByte(b[i+width:], '\\')
		if j < 0 {
			return false
		}
		i += width + j
	}
	return false
}

// hex4 reads the four hex digits at the start of b (a \u escape json.Valid accepted).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= 'a':
			c -= 'a' - 10
		case c >= 'A':
			c -= 'A' - 10
		default:
			c -= '0'
		}
		r = r<<4 | rune(c)
	}
	return r
}

// duplicateKey returns a member name that an object in v, a valid JSON value with no space
// around it, holds twice.
func duplicateKey(v []byte) (string, bool) {
	if v[0] != '{' && v[0] != '[' {
		return "", false
	}
	var seen map[string]bool
	for i := 1; ; {
		if i = skipSpace(v, i); v[i] == '}' || v[i] == ']' {
			return "", false
		}
		if v[0] == '{' {
			k := v[i:valueEnd(v, i)]
			name := string(k[1 : len(k)-1])
			if bytes.IndexByte(k, '\\') >= 0 {
				json.Unmarshal(k, &name)
			}
			if seen[name] {
				return name, true
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[name] = true
			i = skipSpace(v, skipSpace(v, i+len(k))+1) // past the ':'
		}
		end := valueEnd(v, i)
		if name, dup := duplicateKey(v[i:end]); dup {
			return name, true
		}
		if i = skipSpace(v, end); v[i] == ',' {
			i++
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the valid JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
			continue
		case '}', ']':
			if depth == 0 { // the end of the object holding a number, true, false or null
				return i
			}
			depth--
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
			continue
		default:
			continue
		}
		if depth == 0 {
			return i + 1
		}
	}
	return i
}

// keyIs reports whether the quoted member name k is key.
func keyIs(k []byte, key string) bool {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k[1:len(k)-1]) == key
	}
	var s string
	return json.Unmarshal(k, &s) == nil && s == key
}

// idValue reads an id given as a non-empty string or as a number, as written.
func idValue(raw []byte) (string, bool) {
	var s string
	switch {
	case len(raw) == 0:
		return "", false
	case raw[0] == '"':
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		s = strings.TrimSpace(s)
	case raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9':
		s = string(raw)
	}
	if s == "" || len(s) > maxIDLength || strings.ContainsRune(s, 0) {
		return "", false
	}
	return s, true
}

// checkNUL reports every string (key or value) of a decoded payload that holds a NUL
// character: no database text column stores one (PostgreSQL refuses it), so such a payload
// fails validation instead of failing its store write on every retry.
func checkNUL(v any, path string, errs *shipping.ValidationError) {
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			errs.Add(cmpPath(path), "invalid", "must not contain a NUL character")
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if strings.ContainsRune(k, 0) {
				errs.Add(cmpPath(path), "invalid", "must not contain a NUL character in a key")
				continue
			}
			checkNUL(x[k], join(path, k), errs)
		}
	case []any:
		for i, e := range x {
			checkNUL(e, path+"["+strconv.Itoa(i)+"]", errs)
		}
	}
}

// cmpPath names the whole body when path is empty.
func cmpPath(path string) string {
	if path == "" {
		return "(body)"
	}
	return path
}

// ParseOrder validates and normalizes an order payload. Mandatory:
// id, and at least one fulfillment order with a destination (an object with at least one
// field given) and at least one line item; other fields are optional and checked for type
// and range when present. Unknown fields are ignored. Invalid
// payloads return a *shipping.ValidationError naming every bad field by its path, e.g.
// "fulfillmentOrders[0].destination.zip".
func ParseOrder(body []byte) (Order, error) {
	var v shipping.ValidationError
	if _, err := PeekOrderID(body); err != nil {
		v.Add("(body)", "malformed_json", err.Error())
		return Order{}, &v
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		v.Add("(body)", "malformed_json", "order payload is not well-formed JSON")
		return Order{}, &v
	}
	if checkNUL(doc, "", &v); v.Err() != nil {
		return Order{}, v.Err()
	}
	p := parser{errs: &v}
	o := p.order(doc)
	if err := v.Err(); err != nil {
		return Order{}, err
	}
	return o, nil
}

// parser walks a decoded payload, collecting every field error on the way.
type parser struct {
	errs *shipping.ValidationError
}

func (p parser) order(doc map[string]any) Order {
	var o Order
	switch x := doc["id"].(type) {
	case nil:
		p.errs.Add("id", "required", "is required")
	case string:
		if o.OrderID = strings.TrimSpace(x); o.OrderID == "" {
			p.errs.Add("id", "required", "must not be empty")
		}
	case json.Number:
		o.OrderID = x.String()
	default:
		p.errs.Add("id", "invalid_type", "must be a string")
	}
	if len(o.OrderID) > maxIDLength {
		p.errs.Add("id", "too_long", "must be at most 255 characters")
	}
	o.Name = p.str(doc, "", "name")
	o.Tags = p.strings(doc, "", "tags", maxTags)
	if m, ok := p.object(doc, "", "shippingAddress"); ok {
		a := p.address(m, "shippingAddress", false)
		o.ShippingAddress = &a
	}
	fos, present := p.array(doc, "", "fulfillmentOrders", maxFulfillmentOrders)
	if len(fos) == 0 && (present || missing(doc, "fulfillmentOrders")) {
		p.errs.Add("fulfillmentOrders", "required", "at least one fulfillment order is required")
	}
	o.FulfillmentOrders = []FulfillmentOrder{}
	for i, raw := range fos {
		path := "fulfillmentOrders[" + strconv.Itoa(i) + "]"
		m, ok := raw.(map[string]any)
		if !ok {
			p.errs.Add(path, "invalid_type", "must be an object")
			continue
		}
		o.FulfillmentOrders = append(o.FulfillmentOrders, p.fulfillmentOrder(m, path))
	}
	if o.Tags == nil {
		o.Tags = []string{}
	}
	return o
}

func (p parser) fulfillmentOrder(m map[string]any, path string) FulfillmentOrder {
	fo := FulfillmentOrder{
		ID:     p.id(m, path, "id"),
		Status: p.str(m, path, "status"),
	}
	// A destination is mandatory; which of its fields are given is the sender's
	// business, but one with none is no destination.
	if dest, ok := p.object(m, path, "destination"); ok && !blank(dest) {
		fo.Destination = p.address(dest, join(path, "destination"), true)
	} else if ok || missing(m, "destination") {
		p.errs.Add(join(path, "destination"), "required", "is required")
	}
	if dm, ok := p.object(m, path, "deliveryMethod"); ok {
		fo.DeliveryMethod = p.str(dm, join(path, "deliveryMethod"), "methodType")
	}
	if loc, ok := p.object(m, path, "assignedLocation"); ok {
		fo.AssignedLocation = p.str(loc, join(path, "assignedLocation"), "name")
	}
	if duties, ok := p.object(m, path, "internationalDuties"); ok {
		fo.Incoterm = p.str(duties, join(path, "internationalDuties"), "incoterm")
	}
	items, present := p.array(m, path, "lineItems", maxLineItems)
	if len(items) == 0 && (present || missing(m, "lineItems")) {
		p.errs.Add(join(path, "lineItems"), "required", "at least one line item is required")
	}
	fo.LineItems = []LineItem{}
	var total float64
	for i, raw := range items {
		ipath := join(path, "lineItems") + "[" + strconv.Itoa(i) + "]"
		im, ok := raw.(map[string]any)
		if !ok {
			p.errs.Add(ipath, "invalid_type", "must be an object")
			continue
		}
		li := p.lineItem(im, ipath)
		if li.RequiresShipping && li.WeightOz != nil {
			total += *li.WeightOz * float64(li.Quantity)
		}
		fo.LineItems = append(fo.LineItems, li)
	}
	fo.WeightOz = roundOz(total)
	return fo
}

func (p parser) lineItem(m map[string]any, path string) LineItem {
	li := LineItem{
		ID:           p.id(m, path, "id"),
		SKU:          p.str(m, path, "sku"),
		ProductTitle: p.str(m, path, "productTitle"),
		VariantTitle: p.str(m, path, "variantTitle"),
	}
	li.Quantity = 1
	if n, ok := p.integer(m, path, "totalQuantity"); ok {
		if n < 1 {
			p.errs.Add(join(path, "totalQuantity"), "out_of_range", "must be at least 1")
		}
		li.Quantity = n
	}
	li.RemainingQuantity = li.Quantity
	if n, ok := p.integer(m, path, "remainingQuantity"); ok {
		if n < 0 || n > li.Quantity {
			p.errs.Add(join(path, "remainingQuantity"), "out_of_range", "must be from 0 to totalQuantity")
		}
		li.RemainingQuantity = n
	}
	li.RequiresShipping = true
	if b, ok := p.boolean(m, path, "requiresShipping"); ok {
		li.RequiresShipping = b
	}
	if img, ok := p.object(m, path, "image"); ok {
		li.ImageURL = p.str(img, join(path, "image"), "url")
	}
	if w, ok := p.object(m, path, "weight"); ok {
		li.WeightOz = p.weight(w, join(path, "weight"))
	}
	var variantPrice *int64
	if variant, ok := p.object(m, path, "variant"); ok {
		vpath := join(path, "variant")
		variantPrice = p.money(variant, vpath, "price")
		if prod, ok := p.object(variant, vpath, "product"); ok {
			li.ProductID = p.id(prod, join(vpath, "product"), "id")
		}
		if inv, ok := p.object(variant, vpath, "inventoryItem"); ok {
			ipath := join(vpath, "inventoryItem")
			li.CountryOfOrigin = strings.ToUpper(p.str(inv, ipath, "countryCodeOfOrigin"))
			li.HarmonizedSystemCode = p.str(inv, ipath, "harmonizedSystemCode")
			if meas, ok := p.object(inv, ipath, "measurement"); ok {
				if w, ok := p.object(meas, join(ipath, "measurement"), "weight"); ok {
					li.VariantWeightOz = p.weight(w, join(ipath, "measurement.weight"))
					if li.WeightOz == nil {
						li.WeightOz = li.VariantWeightOz
					}
				}
			}
		}
	}
	if fin, ok := p.object(m, path, "financialSummaries"); ok {
		fpath := join(path, "financialSummaries")
		li.UnitPriceCents, li.Currency = p.moneySet(fin, fpath, "originalUnitPriceSet")
		var cur string
		li.DiscountedUnitPriceCents, cur = p.moneySet(fin, fpath, "approximateDiscountedUnitPriceSet")
		if li.Currency == "" {
			li.Currency = cur
		}
	}
	if li.UnitPriceCents == nil {
		li.UnitPriceCents = variantPrice
	}
	li.VariantPriceCents = variantPrice
	return li
}

// moneySet reads {shopMoney: {amount, currencyCode}}.
func (p parser) moneySet(m map[string]any, path, key string) (*int64, string) {
	set, ok := p.object(m, path, key)
	if !ok {
		return nil, ""
	}
	spath := join(path, key)
	money, ok := p.object(set, spath, "shopMoney")
	if !ok {
		return nil, ""
	}
	mpath := join(spath, "shopMoney")
	cur := strings.ToUpper(p.str(money, mpath, "currencyCode"))
	if cur != "" && !currencyCode.MatchString(cur) {
		p.errs.Add(join(mpath, "currencyCode"), "invalid", "must be a three-letter currency code")
	}
	return p.money(money, mpath, "amount"), cur
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// money reads an amount, given as a JSON number or a decimal string, as integer cents.
func (p parser) money(m map[string]any, path, key string) *int64 {
	s, ok := p.decimal(m, path, key)
	if !ok {
		return nil
	}
	c, err := Cents(s)
	if err != nil {
		p.errs.Add(join(path, key), "invalid", err.Error())
		return nil
	}
	return &c
}

// Weight units of the payload and their size in ounces.
var ounces = map[string]float64{
	"POUNDS":    16,
	"OUNCES":    1,
	"KILOGRAMS": 1000 / 28.349523125,
	"GRAMS":     1 / 28.349523125,
}

// weight reads {unit, value} as ounces, rounded to hundredths.
func (p parser) weight(m map[string]any, path string) *float64 {
	unit := strings.ToUpper(p.str(m, path, "unit"))
	s, hasValue := p.decimal(m, path, "value")
	if !hasValue {
		if _, given := m["value"]; !given && unit != "" {
			p.errs.Add(join(path, "value"), "required", "is required with a unit")
		}
		return nil
	}
	factor, known := ounces[unit]
	if !known {
		p.errs.Add(join(path, "unit"), "invalid", "must be one of POUNDS, OUNCES, KILOGRAMS, GRAMS")
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 1e6 {
		p.errs.Add(join(path, "value"), "out_of_range", "must be a number from 0 to 1000000")
		return nil
	}
	oz := roundOz(v * factor)
	return &oz
}

func roundOz(v float64) float64 { return math.Round(v*100) / 100 }

var decimalPattern = regexp.MustCompile(`^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$`)

// Cents converts a decimal amount ("19.99", "1e2", "0.005") to integer cents exactly, rounding
// half away from zero. Negative amounts and amounts of a trillion or more are refused.
func Cents(s string) (int64, error) {
	m := decimalPattern.FindStringSubmatch(s)
	if m == nil || len(s) > 64 {
		return 0, errors.New("must be a decimal amount")
	}
	if m[1] == "-" && strings.Trim(m[2]+m[3], "0") != "" {
		return 0, errors.New("must not be negative")
	}
	exp := 0
	if m[4] != "" {
		var err error
		if exp, err = strconv.Atoi(m[4]); err != nil || exp < -64 || exp > 64 {
			return 0, errors.New("must be less than 1000000000000")
		}
	}
	digits := m[2] + m[3]
	cut := len(m[2]) + exp + 2 // digits[:cut] are whole cents
	for len(digits) < cut {
		digits += "0"
	}
	whole, next := "0", byte('0')
	switch {
	case cut > 0:
		whole = digits[:cut]
		if cut < len(digits) {
			next = digits[cut]
		}
	case cut == 0:
		next = digits[0]
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 14 {
		return 0, errors.New("must be less than 1000000000000")
	}
	var c int64
	if whole != "" {
		c, _ = strconv.ParseInt(whole, 10, 64)
	}
	if next >= '5' {
		c++
	}
	return c, nil
}

var countryCode = regexp.MustCompile(`^[A-Z]{2}$`)

// address normalizes a payload address, type-checking its fields; none is mandatory. A
// destination reads countryCode, the order's shippingAddress countryCodeV2 and coordinates.
func (p parser) address(m map[string]any, path string, destination bool) Address {
	a := Address{
		Street1: p.str(m, path, "address1"),
		Street2: p.str(m, path, "address2"),
		City:    p.str(m, path, "city"),
		Zip:     p.str(m, path, "zip"),
		Company: p.str(m, path, "company"),
		Email:   p.str(m, path, "email"),
		Phone:   p.str(m, path, "phone"),
	}
	a.Name = strings.TrimSpace(p.str(m, path, "firstName") + " " + p.str(m, path, "lastName"))
	a.State = p.str(m, path, "provinceCode")
	if province := p.str(m, path, "province"); a.State == "" {
		a.State = province
	}
	countryKey := "countryCode"
	if !destination {
		countryKey = "countryCodeV2"
	}
	a.Country = strings.ToUpper(p.str(m, path, countryKey))
	if a.Country != "" && !countryCode.MatchString(a.Country) {
		p.errs.Add(join(path, countryKey), "invalid", "must be a two-letter country code")
	}
	if !destination {
		a.Latitude = p.float(m, path, "latitude")
		a.Longitude = p.float(m, path, "longitude")
		p.boolean(m, path, "coordinatesValidated")
		return a
	}
	return a
}

// blank reports whether every field of m is missing.
func blank(m map[string]any) bool {
	for key := range m {
		if !missing(m, key) {
			return false
		}
	}
	return true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// missing reports whether m lacks key: absent, null or a blank string. A value of another
// type is not missing; its accessor reports it.
func missing(m map[string]any, key string) bool {
	switch x := m[key].(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	}
	return false
}

// The accessors below read one field of m. An absent or null field is "not present"; a field
// of the wrong type is reported and treated as absent.

func (p parser) str(m map[string]any, path, key string) string {
	switch x := m[key].(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	}
	p.errs.Add(join(path, key), "invalid_type", "must be a string")
	return ""
}

// id reads an identifier, accepting a number as written.
func (p parser) id(m map[string]any, path, key string) string {
	if n, ok := m[key].(json.Number); ok {
		return n.String()
	}
	return p.str(m, path, key)
}

func (p parser) strings(m map[string]any, path, key string, max int) []string {
	arr, _ := p.array(m, path, key, max)
	var out []string
	for i, raw := range arr {
		s, ok := raw.(string)
		if !ok {
			p.errs.Add(join(path, key)+"["+strconv.Itoa(i)+"]", "invalid_type", "must be a string")
			continue
		}
		out = append(out, s)
	}
	return out
}

func (p parser) object(m map[string]any, path, key string) (map[string]any, bool) {
	switch x := m[key].(type) {
	case nil:
		return nil, false
	case map[string]any:
		return x, true
	}
	p.errs.Add(join(path, key), "invalid_type", "must be an object")
	return nil, false
}

// Bounds of the payload's arrays: a longer one is refused whole (too_many), before any of
// its elements is looked at, so a hostile payload cannot multiply the work or the errors.
const (
	maxTags              = 250
	maxFulfillmentOrders = 100
	maxLineItems         = 1000 // per fulfillment order
)

// array reads an array of at most max elements.
func (p parser) array(m map[string]any, path, key string, max int) ([]any, bool) {
	switch x := m[key].(type) {
	case nil:
		return nil, false
	case []any:
		if len(x) > max {
			p.errs.Add(join(path, key), "too_many", "must have at most "+strconv.Itoa(max)+" elements")
			return nil, false
		}
		return x, true
	}
	p.errs.Add(join(path, key), "invalid_type", "must be an array")
	return nil, false
}

// integer reads a whole number given as a JSON number or as a string holding one, as decimal
// does: 2, "2", 2.0 and 2e0 are all 2.
func (p parser) integer(m map[string]any, path, key string) (int64, bool) {
	s, ok := p.decimal(m, path, key)
	if !ok {
		return 0, false
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1e9 {
		return int64(f), true
	}
	p.errs.Add(join(path, key), "invalid", "must be a whole number below 1000000000")
	return 0, false
}

func (p parser) boolean(m map[string]any, path, key string) (bool, bool) {
	switch x := m[key].(type) {
	case nil:
		return false, false
	case bool:
		return x, true
	}
	p.errs.Add(join(path, key), "invalid_type", "must be a boolean")
	return false, false
}

func (p parser) float(m map[string]any, path, key string) *float64 {
	s, ok := p.decimal(m, path, key)
	if !ok {
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		p.errs.Add(join(path, key), "invalid", "must be a finite number")
		return nil
	}
	return &f
}

// decimal reads a number given as a JSON number or as a string holding one.
func (p parser) decimal(m map[string]any, path, key string) (string, bool) {
	switch x := m[key].(type) {
	case nil:
		return "", false
	case json.Number:
		return x.String(), true
	case string:
		if s := strings.TrimSpace(x); decimalPattern.MatchString(s) {
			return s, true
		}
	}
	p.errs.Add(join(path, key), "invalid_type", "must be a number")
	return "", false
}
