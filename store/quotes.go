package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/codec"
)

// A shipment's quotes are rows of shipment_quotes (migration 028), one per quote in the order
// the API shows them, written with the shipment and never changed: the record that sqlite3 and
// psql read, in cents, beside the shipment's row and its request and messages (JSON text,
// shipment_requests). Its rendering, in shipments.packed, is a copy.

// quoteColumns are the shipment_quotes columns, in the order insertQuotes writes and scanQuote
// reads them.
const quoteColumns = `shipment_id, position, id, carrier, service, currency, postage_cents, surcharges_cents,
	total_cents, retail_cents, estimated_delivery_at, estimated_delivery_days, usps_zone, country_zone, billable_weight,
	actual_oz_weight, billable_oz_weight, dim_factor, dim_threshold, volume, surcharges, carrier_version, ddp_fee_cents, crc`

// quoteArgs is how many columns a row of shipment_quotes has.
const quoteArgs = 24

// quoteRows are the arguments of insertQuotes' statement for a shipment's quotes, made before
// its transaction. A quote the columns cannot hold exactly (a price or surcharge not in whole
// cents of its currency) is an error: the record never differs from what was quoted.
type quoteRows []any

func quoteRowsOf(shipmentID string, rates []shipping.Rate) (quoteRows, error) {
	args := make(quoteRows, 0, quoteArgs*len(rates))
	for i, r := range rates {
		if r.Price != (shipping.Money{Amount: float64(r.TotalCents) / 100, Currency: r.Price.Currency}) {
			return nil, fmt.Errorf("quote %s: price %v is not its total of %d cents", r.ID, r.Price, r.TotalCents)
		}
		m := r.RateMetadata
		surcharges, err := codec.EncodeSurcharges(m.SurchargesMetadata, r.Price.Currency)
		if err != nil {
			return nil, fmt.Errorf("quote %s: %w", r.ID, err)
		}
		var ddp sql.NullInt64
		if m.DDPFee != nil {
			if ddp.Int64, err = codec.WholeCents(*m.DDPFee, r.Price.Currency); err != nil {
				return nil, fmt.Errorf("quote %s: DDP fee: %w", r.ID, err)
			}
			ddp.Valid = true
		}
		w := m.WeightMetadata
		row := []any{shipmentID, i, r.ID, r.Carrier, r.Service, r.Price.Currency, r.PostageCents, r.SurchargesCents,
			r.TotalCents, r.RetailCents, Micros(r.EstimatedDeliveryDate.Time), r.EstimatedDeliveryDays, m.USPSZone,
			m.CountryZone, m.BillableWeight, w.ActualOzWeight, w.BillableOzWeight, w.DimFactor, w.DimThreshold, w.Volume,
			surcharges, m.CarrierVersion, ddp}
		args = append(append(args, row...), checksum(row...))
	}
	return args, nil
}

// statements are the INSERT of the rows, if there are any: one statement.
func (q quoteRows) statements() []sqlStmt {
	if len(q) == 0 {
		return nil
	}
	return []sqlStmt{{quoteInsert(len(q) / quoteArgs), q}}
}

// quoteInserts holds the INSERT statement of n rows of shipment_quotes by n, each made once:
// a create builds none inside the writer (building it was a tenth of the writer's time a create).
var quoteInserts sync.Map // int → string

// quoteInsert is the INSERT statement of n rows of shipment_quotes.
func quoteInsert(n int) string {
	if s, ok := quoteInserts.Load(n); ok {
		return s.(string)
	}
	var args []any // counted only: the rows' values are bound when the statement runs
	rows := make([]string, n)
	for i := range rows {
		rows[i] = "(" + placeholders(&args, make([]any, quoteArgs)) + ")"
	}
	s, _ := quoteInserts.LoadOrStore(n, `INSERT INTO shipment_quotes (`+quoteColumns+`) VALUES `+strings.Join(rows, ", "))
	return s.(string)
}

// loadQuotes reads, in one query, the quotes of the shipments whose ShippingRates are nil.
func loadQuotes(ctx context.Context, q querier, shipments []*shipping.Shipment) error {
	return fillRates(ctx, q, shipments, nil, func(in string) string {
		return `SELECT ` + quoteColumns + ` FROM shipment_quotes WHERE shipment_id IN (` + in + `) ORDER BY shipment_id, position`
	}, scanQuote)
}

// fillRates reads, in one query, the rates of the shipments whose ShippingRates are nil, in their
// order: query is the statement for the placeholders in (of the shipments' ids, numbered after
// args), scan reads one of its rows.
func fillRates(ctx context.Context, q querier, shipments []*shipping.Shipment, args []any, query func(in string) string,
	scan func(rowScanner) (shipping.Rate, error)) error {
	byID := map[string]*shipping.Shipment{}
	var ids []string
	for _, s := range shipments {
		if s.ShippingRates == nil {
			s.ShippingRates = []shipping.Rate{}
			byID[s.ID], ids = s, append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := q.QueryContext(ctx, query(placeholders(&args, ids)), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return err
		}
		if s := byID[r.ShipmentID]; s != nil {
			s.ShippingRates = append(s.ShippingRates, r)
		}
	}
	return rows.Err()
}

// scanQuote reads one shipment_quotes row selected as quoteColumns.
func scanQuote(row rowScanner) (shipping.Rate, error) {
	var r shipping.Rate
	var position int
	var delivery int64
	var surcharges string
	var ddp, crc sql.NullInt64
	m := &r.RateMetadata
	w := &m.WeightMetadata
	err := row.Scan(&r.ShipmentID, &position, &r.ID, &r.Carrier, &r.Service, &r.Price.Currency, &r.PostageCents,
		&r.SurchargesCents, &r.TotalCents, &r.RetailCents, &delivery, &r.EstimatedDeliveryDays, &m.USPSZone, &m.CountryZone,
		&m.BillableWeight, &w.ActualOzWeight, &w.BillableOzWeight, &w.DimFactor, &w.DimThreshold, &w.Volume, &surcharges,
		&m.CarrierVersion, &ddp, &crc)
	if err != nil {
		return r, err
	}
	if err := checkSum(crc, r.ShipmentID, position, r.ID, r.Carrier, r.Service, r.Price.Currency, r.PostageCents,
		r.SurchargesCents, r.TotalCents, r.RetailCents, delivery, r.EstimatedDeliveryDays, m.USPSZone, m.CountryZone,
		m.BillableWeight, w.ActualOzWeight, w.BillableOzWeight, w.DimFactor, w.DimThreshold, w.Volume, surcharges,
		m.CarrierVersion, ddp); err != nil {
		return r, &unreadableRecord{r.ShipmentID, "shipping_rates", fmt.Errorf("quote %s: %w", r.ID, err)}
	}
	r.Price.Amount, r.EstimatedDeliveryDate = float64(r.TotalCents)/100, stamp(delivery)
	if ddp.Valid {
		m.DDPFee = &shipping.Money{Amount: float64(ddp.Int64) / 100, Currency: r.Price.Currency}
	}
	if m.SurchargesMetadata, err = codec.DecodeSurcharges(surcharges, r.Price.Currency); err != nil {
		return r, fmt.Errorf("quote %s: surcharges: %w", r.ID, err)
	}
	return r, nil
}

// requestInsert is the INSERT of a shipment's row of shipment_requests.
func requestInsert(shipmentID, req string, messages *string) sqlStmt {
	return sqlStmt{`INSERT INTO shipment_requests (shipment_id, request, messages, crc) VALUES ($1, $2, $3, $4)`,
		[]any{shipmentID, req, messages, checksum(req, messages)}}
}

// requestJSON is the shipment_requests.request column of s.
func requestJSON(s *shipping.Shipment) (string, error) {
	b, err := json.Marshal(shipmentRequest{s.Origin, s.Destination, s.ReturnAddress, s.Parcel, s.CustomsInfo, s.IsReturn})
	return string(b), err
}

// messagesJSON is the shipment_requests.messages column of s: NULL for a shipment quoted
// before messages were kept (nil Messages), whose rendering has none.
func messagesJSON(ms []shipping.Reason) (*string, error) {
	if ms == nil {
		return nil, nil
	}
	b, err := json.Marshal(ms)
	s := string(b)
	return &s, err
}
