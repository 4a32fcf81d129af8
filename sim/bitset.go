package sim

import "math/bits"

// bitset is a two-level set of small integers: words hold the members and
// summary bit i is set when words[i] is not zero, so next skips 4096 empty
// positions per summary word.
type bitset struct {
	words   []uint64
	summary []uint64
}

func newBitset(n int) bitset {
	w := (n + 63) / 64
	return bitset{words: make([]uint64, w), summary: make([]uint64, (w+63)/64)}
}

// full returns a set holding 0..n-1.
func fullBitset(n int) bitset {
	b := newBitset(n)
	for i := range b.words {
		b.words[i] = ^uint64(0)
		b.summary[i/64] |= 1 << (i % 64)
	}
	if r := n % 64; r != 0 {
		b.words[len(b.words)-1] = 1<<r - 1
	}
	return b
}

func (b *bitset) set(i int) {
	b.words[i/64] |= 1 << (i % 64)
	b.summary[i/4096] |= 1 << ((i / 64) % 64)
}

func (b *bitset) clear(i int) {
	w := i / 64
	b.words[w] &^= 1 << (i % 64)
	if b.words[w] == 0 {
		b.summary[w/64] &^= 1 << (w % 64)
	}
}

// next returns the smallest member >= i, or -1.
func (b *bitset) next(i int) int {
	if i < 0 {
		i = 0
	}
	w := i / 64
	if w >= len(b.words) {
		return -1
	}
	if m := b.words[w] & (^uint64(0) << (i % 64)); m != 0 {
		return w*64 + bits.TrailingZeros64(m)
	}
	for s := w + 1; s < len(b.words); {
		j := s / 64
		if m := b.summary[j] & (^uint64(0) << (s % 64)); m != 0 {
			w = j*64 + bits.TrailingZeros64(m)
			return w*64 + bits.TrailingZeros64(b.words[w])
		}
		s = (j + 1) * 64
	}
	return -1
}
