// Package shipping holds waybill's shipping model and its use cases: addresses, parcels,
// shipments, rates, labels and tracking, and the rules on them; creating, buying, cancelling
// and tracking shipments, batches of them, and the workers that drive these.
//
// The carriers (shipping/carrier), rate shopping (shipping/rating) and label documents
// (shipping/labeldoc) live below it: they import it, it imports none of them. A use case that
// needs one of them declares the small interface it uses (RateShopper, Carrier), and the host
// wires the concrete value in.
package shipping
