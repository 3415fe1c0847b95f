package migrate

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"
)

// A frozen copy of the LZ77 form the store's packed values use (store/internal/lz as it was when
// migrations 028, 038 and 039 were written): the packer these migrations write with and the
// unpacker they read the older formats with. It must never change with the runtime's: what
// these migrations write is read by the runtime as packed format 5, and that format's bytes are
// pinned.
//
// A packed form is a sequence of operations, each starting with a uvarint h:
//
//	h = n<<1       n literal bytes follow;
//	h = (n-4)<<1|1 a uvarint d follows: copy n bytes from d bytes back in the output,
//	               the dictionary counting as output before the first byte.
//
// A copy may overlap what it writes (d < n repeats the last d bytes).

const (
	lzHashBits = 11
	lzWays     = 4 // candidates kept per hash: the longest match among them is taken
	lzMinMatch = 6 // shorter matches cost about what their bytes do as literals
)

// lzDict is a dictionary with the index of its positions.
type lzDict struct {
	b     []byte
	table lzTable
}

// lzTable maps the hash of 8 bytes (the first 6 of them) to the last lzWays positions + 1 in
// the window (dictionary, then input) that start with them, newest first; 0 is none.
type lzTable [1 << lzHashBits][lzWays]int32

func lzHash(win []byte, i int) uint32 {
	return uint32(binary.LittleEndian.Uint64(win[i:]) << 16 * 0x9E3779B97F4A7C15 >> (64 - lzHashBits))
}

func (t *lzTable) add(win []byte, i int) {
	e := &t[lzHash(win, i)]
	copy(e[1:], e[:lzWays-1])
	e[0] = int32(i + 1)
}

// newLZDict indexes b, which must not change after.
func newLZDict(b []byte) *lzDict {
	d := &lzDict{b: b}
	for i := 0; i+8 <= len(b); i++ {
		d.table.add(b, i)
	}
	return d
}

// lzWindow is the scratch space of a pack, kept for the next (a table is 32 kB).
type lzWindow struct {
	b     []byte
	table lzTable
}

// pack appends the packed form of src to dst, using w as scratch space.
func (d *lzDict) pack(w *lzWindow, dst, src []byte) []byte {
	win := append(append(w.b[:0], d.b...), src...)
	w.b = win
	t := &w.table
	*t = d.table
	lit, i := len(d.b), len(d.b)
	for i+8 <= len(win) {
		e := &t[lzHash(win, i)]
		best, from := 0, 0
		for _, c := range e {
			if c == 0 {
				break
			}
			if n := lzMatchLen(win, int(c)-1, i); n > best {
				best, from = n, int(c)-1
			}
		}
		t.add(win, i)
		if best < lzMinMatch {
			i++
			continue
		}
		dst = lzLiteral(dst, win[lit:i])
		dst = binary.AppendUvarint(dst, uint64(best-4)<<1|1)
		dst = binary.AppendUvarint(dst, uint64(i-from))
		i += best
		lit = i
	}
	return lzLiteral(dst, win[lit:])
}

func lzLiteral(dst, b []byte) []byte {
	if len(b) == 0 {
		return dst
	}
	return append(binary.AppendUvarint(dst, uint64(len(b))<<1), b...)
}

// lzMatchLen is the length of the common prefix of win[c:] and win[i:], c < i.
func lzMatchLen(win []byte, c, i int) int {
	n := 0
	for i+n+8 <= len(win) {
		if x := binary.LittleEndian.Uint64(win[i+n:]) ^ binary.LittleEndian.Uint64(win[c+n:]); x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
		n += 8
	}
	for i+n < len(win) && win[c+n] == win[i+n] {
		n++
	}
	return n
}

var errLZCorrupt = errors.New("lz: corrupt input")

// unpackAll appends to dst what src unpacks to, which must be exactly n bytes, src used up: a
// form cut short, one with bytes after its end, or one that unpacks to more is errLZCorrupt.
func (d *lzDict) unpackAll(dst, src []byte, n int) ([]byte, error) {
	start := len(dst)
	dst = append(slices.Grow(dst, len(d.b)+n), d.b...)
	end := len(dst) + n
	for len(src) > 0 && len(dst) < end {
		h, k := binary.Uvarint(src)
		if k <= 0 {
			return nil, errLZCorrupt
		}
		src = src[k:]
		if h&1 == 0 {
			if h>>1 > uint64(len(src)) || h>>1 > uint64(end-len(dst)) {
				return nil, errLZCorrupt
			}
			dst = append(dst, src[:h>>1]...)
			src = src[h>>1:]
			continue
		}
		dist, k := binary.Uvarint(src)
		if k <= 0 || dist == 0 || dist > uint64(len(dst)-start) || h>>1+4 > uint64(end-len(dst)) {
			return nil, errLZCorrupt
		}
		src = src[k:]
		for from, m := len(dst)-int(dist), int(h>>1+4); m > 0; {
			c := min(m, int(dist))
			dst = append(dst, dst[from:from+c]...)
			from, m = from+c, m-c
		}
	}
	if len(src) > 0 || len(dst) != end {
		return nil, errLZCorrupt
	}
	k := copy(dst[start:], dst[start+len(d.b):])
	return dst[:start+k], nil
}
