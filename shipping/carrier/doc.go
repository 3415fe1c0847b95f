// Package carrier holds the carriers waybill stores as data: their rate cards (services, price
// grids by weight break and zone, surcharges, limits, coverage, zone charts) and the versions
// they are stored in, the table carrier that quotes, buys and voids from them, tracking number
// schemes and the check that no two carriers' numbers overlap, putting a card or a price grid,
// and the registry of the carriers in force beside the host's own.
package carrier
