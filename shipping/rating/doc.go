// Package rating quotes shipments across carriers: the shopper, which asks every carrier of a
// rate shopping profile and orders their rates; the profiles themselves (which carriers, where
// they deliver, sort centers, area surcharges and per-route zones) and their cache; and the
// business days estimated delivery dates count, US federal holidays left out.
package rating
