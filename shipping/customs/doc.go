// Package customs holds what an international shipment needs beyond a domestic one: the
// ISO 3166-1 country table with postal-code formats and subdivisions, the customs
// declaration and its rules, UPU S10 tracking numbers, and the customs documents (CN22, CN23
// and the commercial invoice).
//
// It imports no other waybill package but the document writers, so that shipping can import it.
package customs
