package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping"
)

// ErrNoSerialsReserved is what a purchase's serial source answers on PostgreSQL when this
// process holds no reserved serials of the carrier: the buy gives up its transaction, a block
// is reserved in a transaction of its own, and the buy runs again. A carrier's PurchaseFunc
// passes it through unchanged.
var ErrNoSerialsReserved = errors.New("no tracking serials reserved")

// txSerials hands out tracking serials in a purchase's transaction (shipping.SerialSource).
// On SQLite, whose writers run one at a time anyway, it takes each serial from the carrier's
// row in that transaction, so a purchase that fails gives its serial back. On PostgreSQL it
// takes them from the blocks this process reserved (serialBlocks): a buy never holds the
// carrier's row, so one carrier's buys do not wait for each other's commits (DESIGN §18). It
// remembers the last serial it handed out, which passOver needs, and the block it lacked.
type txSerials struct {
	tx      *sql.Tx
	blocks  *serialBlocks // nil on SQLite
	carrier string
	serial  int64
	need    *serialNeed
}

// serialNeed is a block a purchase lacked.
type serialNeed struct {
	carrier  string
	from, to int64
}

func (s *txSerials) NextSerial(ctx context.Context, carrier string, from, to int64) (int64, error) {
	if s.blocks != nil {
		n, ok := s.blocks.take(carrier, from, to)
		if !ok {
			s.need = &serialNeed{carrier, from, to}
			return 0, ErrNoSerialsReserved
		}
		s.carrier, s.serial = carrier, n
		return n, nil
	}
	var n int64
	err := s.tx.QueryRowContext(ctx, `UPDATE carriers SET next_serial = CASE WHEN next_serial < $1 THEN $1 + 1 ELSE next_serial + 1 END
		WHERE code = $2 RETURNING next_serial - 1`, from, carrier).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("carrier %s is not stored: it has no tracking serials", carrier)
	}
	if err == nil {
		s.carrier, s.serial = carrier, n
	}
	return n, err
}

// serialBlocks are the tracking serials this process reserved ahead, by carrier: each block is
// taken from the carrier's row in a short transaction of its own, never past the range's end,
// so serials stay unique across processes and increase within one; a crash loses at most a
// block's unused serials (gaps are allowed, reuse never is).
type serialBlocks struct {
	// reserving is held while a block is reserved: reservations go one at a time. It is never
	// taken inside a purchase's transaction, and mu never across a query: a buy holding a
	// connection of the pool must not wait for a reservation that waits for a connection.
	reserving sync.Mutex
	mu        sync.Mutex // guards m
	m         map[string]*serialBlock
}

// serialBlock is one carrier's reserved serials, next to last, and how the next block is sized.
type serialBlock struct {
	next, last int64
	size       int64     // the size of the last block reserved
	at         time.Time // when it was reserved
}

// Block sizes follow the buy rate: a block used up within blockFast of its reservation makes
// the next one twice as large, up to maxBlock; one that lasted over blockSlow, half as large.
// At most a second's buys are lost in a crash.
const (
	maxBlock  = 1024
	blockFast = time.Second
	blockSlow = 10 * time.Second
)

// take hands out the next reserved serial of carrier from from to to.
func (b *serialBlocks) take(carrier string, from, to int64) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	blk := b.m[carrier]
	if blk == nil || blk.next > blk.last || blk.next < from || blk.next > to {
		return 0, false
	}
	blk.next++
	return blk.next - 1, true
}

// peek returns the serial this process hands out next for carrier, if it holds one.
func (b *serialBlocks) peek(carrier string) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if blk := b.m[carrier]; blk != nil && blk.next <= blk.last {
		return blk.next, true
	}
	return 0, false
}

// reserveSerials reserves the next block of need's carrier, from need.from, never past need.to,
// in a transaction of its own; shipping.ErrTrackingNumbersExhausted when no serial is left.
// One reservation at a time per process: buys that lack serials meanwhile find the new block.
func (db *DB) reserveSerials(ctx context.Context, need *serialNeed) error {
	b := &db.serials
	b.reserving.Lock()
	defer b.reserving.Unlock()
	b.mu.Lock()
	if b.m == nil {
		b.m = map[string]*serialBlock{}
	}
	blk := b.m[need.carrier]
	if blk == nil {
		blk = &serialBlock{next: 1}
		b.m[need.carrier] = blk
	}
	fresh := blk.next <= blk.last && blk.next >= need.from && blk.next <= need.to
	b.mu.Unlock()
	if fresh {
		return nil // another buy reserved one meanwhile
	}
	size := int64(1)
	if !blk.at.IsZero() {
		switch since := time.Since(blk.at); {
		case since < blockFast:
			size = min(2*blk.size, maxBlock)
		case since > blockSlow:
			size = max(1, blk.size/2)
		default:
			size = blk.size
		}
	}
	var first, last int64
	err := db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var next int64
		err := tx.QueryRowContext(ctx, `SELECT next_serial FROM carriers WHERE code = $1`+db.forUpdate(), need.carrier).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("carrier %s is not stored: it has no tracking serials", need.carrier)
		}
		if err != nil {
			return err
		}
		first = max(next, need.from)
		last = min(first+size-1, need.to)
		if last < first {
			return shipping.ErrTrackingNumbersExhausted
		}
		_, err = tx.ExecContext(ctx, `UPDATE carriers SET next_serial = $1 WHERE code = $2`, last+1, need.carrier)
		return err
	})
	if err != nil {
		return err
	}
	b.mu.Lock()
	blk.next, blk.last, blk.size, blk.at = first, last, size, time.Now()
	b.mu.Unlock()
	return nil
}
