package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/lz"
)

// The stored form of shipments and labels (issue 24). A shipment is one value,
// shipments.packed: its rendering (the answer of GET /shipments/{id}, label_url marked), its
// request (shipmentRequest) and the cents of its quotes that the rendering does not show,
// packed together by lz, so that the quotes are kept once, in the rendering, and the request
// costs little beside the addresses it repeats. A label's packed value is its rendering.
// rerender (and the create and the buy, which render what they write) own them.

// Format versions. The first byte of a packed value names its format; every version is read
// for as long as values of it may be stored (docs/storage.md specifies each), and all pack
// against packDict, which is therefore never changed (TestPackDictPinned).
//
//	packV1       version, the parts' lengths (uvarints), the parts packed as one
//	packV2Holed  version, the hole's offset and the filling (uvarints, then its bytes), then
//	             what a packV1 value holds after its version, the first part without the filling
//	packChecked  as packV1, with two CRC-32C (Castagnoli, little-endian) after the version: of
//	             the first part unpacked, and of the others unpacked, one after the other
//	packHoled    as packV2Holed, with the two CRC-32C after the filling, the first part's
//	             counting the filling in its place
//
// Values are written as packChecked and packHoled; a read checks what it unpacks against its
// CRC, and a whole read requires the packed input used up, so a damaged value is an error, never
// wrong or broken data served.
const (
	packV1      = 1
	packV2Holed = 2
	packChecked = 3
	packHoled   = 4
)

// packDict is what a packed value is packed against: the shape of a bought shipment's
// rendering, which holds its label's.
const packDict = `{"id":"","status":"","brand":"","ship_date":"","origin":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"destination":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"return_address":{"name":"","street1":"","city":"","state":"","zip":"","country":"US"},"parcel":{"length":0,"width":0,"height":0,"length_unit":"IN","weight":0,"weight_unit":"OZ"},"rate_shopping_profile":"default","rate_shopping_strategy":"ALL","label_format":"PDF","custom_reference_1":null,"custom_reference_2":null,"shipping_rates":[{"id":"","shipment_id":"","carrier":"","service":"","price":{"amount":0,"currency":"USD"},"estimated_delivery_date":"","estimated_delivery_days":0,"rate_metadata":{"usps_zone":0,"billable_weight":0,"weight_metadata":{"actual_oz_weight":0,"billable_oz_weight":0,"dim_factor":0,"dim_threshold":0,"volume":0},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0,"currency":"USD"}}],"carrier_version":0}}],"shipping_label":{"id":"","shipment_id":"","status":"PRE_TRANSIT","substatus":null,"label_url":"","label_format":"PDF","tracking_code":"","carrier":"","service":"","shipping_rate_id":"","shipping_rate":{"id":"","shipment_id":"","carrier":"","service":"","price":{"amount":0,"currency":"USD"},"estimated_delivery_date":"","estimated_delivery_days":0,"rate_metadata":{"usps_zone":0,"billable_weight":0,"weight_metadata":{"actual_oz_weight":0,"billable_oz_weight":0,"dim_factor":0,"dim_threshold":0,"volume":0},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0,"currency":"USD"}}],"carrier_version":0}},"insurance_amount":null,"manifest_id":null,"delivered_at":null,"first_carrier_scan_at":null,"created_at":"2026-01-01T00:00:00.000000Z","updated_at":""},"created_at":"","updated_at":"","customs_info":null}`

// packer packs against packDict; it is read-only once made.
var packer = lz.NewDict([]byte(packDict))

// maxUnpacked bounds what a packed value may unpack to (a shipment's rendering with its nine
// quotes is 7 kB).
const maxUnpacked = 4 << 20

var errPacked = errors.New("store: malformed packed value")

// errChecksum reports a packed value whose bytes unpack to something else than was packed.
var errChecksum = errors.New("store: packed value fails its checksum")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// pack joins parts into one packed value (packChecked).
func pack(parts ...[]byte) []byte {
	dst := appendCRCs([]byte{packChecked}, crc32.Checksum(parts[0], castagnoli), restCRC(parts))
	return packParts(dst, parts)
}

// restCRC is the CRC-32C of the parts after the first, one after the other.
func restCRC(parts [][]byte) uint32 {
	var c uint32
	for _, p := range parts[1:] {
		c = crc32.Update(c, castagnoli, p)
	}
	return c
}

func appendCRCs(dst []byte, first, rest uint32) []byte {
	return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(dst, first), rest)
}

// packParts appends to dst the length of every part, then the parts packed as one.
func packParts(dst []byte, parts [][]byte) []byte {
	n := 0
	for _, p := range parts {
		dst = binary.AppendUvarint(dst, uint64(len(p)))
		n += len(p)
	}
	raw := make([]byte, 0, n)
	for _, p := range parts {
		raw = append(raw, p...)
	}
	return packer.Pack(slices.Grow(dst, n/4), raw) // a rendering packs to about a sixth
}

// holed is a value packed before some bytes of its first part are known: the buy packs its
// renderings outside its transaction, where the carrier has not yet given the tracking code,
// and fills the hole with the code inside it, without packing (a packHoled value). It keeps
// the CRC of the first part up to the hole and the bytes after it, so that the filled part's
// CRC costs a pass over 7 kB, not a pack.
type holed struct {
	at      int
	headCRC uint32 // of the first part before the hole
	tail    []byte // the first part after the hole
	restCRC uint32
	packed  []byte // the parts' lengths and the packed parts
}

// packHole packs parts, the first with a hole at offset at.
func packHole(at int, parts ...[]byte) holed {
	return holed{at, crc32.Checksum(parts[0][:at], castagnoli), parts[0][at:], restCRC(parts), packParts(nil, parts)}
}

// fill is the packed value with fill in its hole.
func (h holed) fill(fill []byte) []byte {
	first := crc32.Update(crc32.Update(h.headCRC, castagnoli, fill), castagnoli, h.tail)
	out := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(fill)+8+len(h.packed))
	out = binary.AppendUvarint(binary.AppendUvarint(append(out, packHoled), uint64(h.at)), uint64(len(fill)))
	return append(appendCRCs(append(out, fill...), first, h.restCRC), h.packed...)
}

// unpack reads a value pack made of n parts, whole.
func unpack(b []byte, n int) ([][]byte, error) {
	v, err := header(b, n)
	if err != nil {
		return nil, err
	}
	total := len(v.fill)
	for _, l := range v.lens {
		total += l
	}
	raw, err := packer.UnpackAll(make([]byte, 0, total), v.body, total-len(v.fill))
	if err != nil {
		return nil, errPacked
	}
	raw = slices.Insert(raw, v.at, v.fill...)
	v.lens[0] += len(v.fill)
	parts := make([][]byte, n)
	for i, l := range v.lens {
		parts[i], raw = raw[:l], raw[l:]
	}
	if v.checked && (crc32.Checksum(parts[0], castagnoli) != v.firstCRC || restCRC(parts) != v.restCRC) {
		return nil, errChecksum
	}
	return parts, nil
}

// appendRendering appends to dst the first part of a value pack made of n parts: the
// rendering, unpacked alone and checked against its CRC.
func appendRendering(dst, b []byte, n int) ([]byte, error) {
	v, err := header(b, n)
	if err != nil {
		return nil, err
	}
	start := len(dst)
	if dst, err = packer.Unpack(dst, v.body, v.lens[0]); err != nil || len(dst)-start != v.lens[0] {
		return nil, errPacked
	}
	dst = slices.Insert(dst, start+v.at, v.fill...)
	if v.checked && crc32.Checksum(dst[start:], castagnoli) != v.firstCRC {
		return nil, errChecksum
	}
	return dst, nil
}

// packedValue is a packed value's header read: its parts' lengths as packed (the first
// without the filling), its hole's offset and filling (none in a value without a hole), its
// CRCs (in a checked format), and the packed parts.
type packedValue struct {
	lens              []int
	at                int
	fill              []byte
	checked           bool
	firstCRC, restCRC uint32
	body              []byte
}

// header reads the header of a packed value of n parts.
func header(b []byte, n int) (packedValue, error) {
	var v packedValue
	if len(b) == 0 || b[0] < packV1 || b[0] > packHoled {
		return v, errPacked
	}
	hasHole, total := b[0] == packV2Holed || b[0] == packHoled, 0
	v.checked = b[0] == packChecked || b[0] == packHoled
	b = b[1:]
	next := func() (int, bool) { // a uvarint that keeps the total unpacked within maxUnpacked
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(maxUnpacked-total) {
			return 0, false
		}
		b = b[k:]
		return int(l), true
	}
	if hasHole {
		at, ok1 := next()
		l, ok2 := next()
		if !ok1 || !ok2 || l > len(b) {
			return v, errPacked
		}
		v.at, v.fill, b, total = at, b[:l], b[l:], l
	}
	if v.checked {
		if len(b) < 8 {
			return v, errPacked
		}
		v.firstCRC, v.restCRC, b = binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), b[8:]
	}
	v.lens = make([]int, n)
	for i := range v.lens {
		l, ok := next()
		if !ok {
			return v, errPacked
		}
		v.lens[i], total = l, total+l
	}
	if v.at > v.lens[0] {
		return v, errPacked
	}
	v.body = b
	return v, nil
}

// packShipment is the packed value of s, whose rendering is rendering: the rendering, the
// request, and each quote's postage, surcharges, total and retail cents (varints).
func packShipment(rendering []byte, s *shipping.Shipment) ([]byte, error) {
	req, cents, err := shipmentParts(s)
	if err != nil {
		return nil, err
	}
	return pack(rendering, req, cents), nil
}

// shipmentParts are the parts of s's packed value after its rendering.
func shipmentParts(s *shipping.Shipment) (req, cents []byte, err error) {
	req, err = json.Marshal(shipmentRequest{s.Origin, s.Destination, s.ReturnAddress, s.Parcel, s.CustomsInfo, s.IsReturn})
	if err != nil {
		return nil, nil, err
	}
	cents = make([]byte, 0, 12*len(s.ShippingRates))
	for _, r := range s.ShippingRates {
		for _, c := range []int64{r.PostageCents, r.SurchargesCents, r.TotalCents, r.RetailCents} {
			cents = binary.AppendVarint(cents, c)
		}
	}
	return req, cents, nil
}

// unpackShipment reads into s what a packed value holds beside its columns: the request and
// the quotes, and returns the rendering.
func unpackShipment(b []byte, s *shipping.Shipment) ([]byte, error) {
	p, err := unpack(b, 3)
	if err != nil {
		return nil, err
	}
	rendering, req, cents := p[0], p[1], p[2]
	if err := setRequest(s, req); err != nil {
		return nil, err
	}
	if s.ShippingRates, err = quotesOf(rendering, cents); err != nil {
		return nil, fmt.Errorf("shipment %s: %w", s.ID, err)
	}
	if s.Messages, err = messagesOf(rendering); err != nil {
		return nil, fmt.Errorf("shipment %s: messages: %w", s.ID, err)
	}
	return rendering, nil
}

// messagesOf reads the messages of a shipment's rendering, kept there alone (billing copies the
// request part, which they are not part of): nil for a rendering stored before shipments had
// them, which therefore renders without them again. Only the shipment's own key is named
// messages, and a quote inside a string is escaped, so `"messages":[` is found only there.
func messagesOf(rendering []byte) ([]shipping.Reason, error) {
	const key = `"messages":[`
	i := bytes.Index(rendering, []byte(key))
	if i < 0 {
		return nil, nil
	}
	rest := string(rendering[i+len(key):])
	if ms, ok := fastMessages(rest); ok {
		return ms, nil
	}
	var ms []shipping.Reason
	err := json.NewDecoder(strings.NewReader("[" + rest)).Decode(&ms)
	return ms, err
}

// quotesOf reads the quotes of a shipment's rendering, with the cents packShipment stored.
func quotesOf(rendering, cents []byte) ([]shipping.Rate, error) {
	_, rest, ok := strings.Cut(string(rendering), `"shipping_rates":`)
	if !ok {
		return nil, errors.New("no shipping_rates in the rendering")
	}
	rates, ok := fastQuotes(rest)
	if !ok {
		if err := json.NewDecoder(strings.NewReader(rest)).Decode(&rates); err != nil {
			return nil, err
		}
	}
	for i := range rates {
		r := &rates[i]
		for _, c := range []*int64{&r.PostageCents, &r.SurchargesCents, &r.TotalCents, &r.RetailCents} {
			v, k := binary.Varint(cents)
			if k <= 0 {
				return nil, errPacked
			}
			*c, cents = v, cents[k:]
		}
	}
	if len(cents) > 0 {
		return nil, errPacked
	}
	return rates, nil
}
