package latency

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Interval is a Recorder for one interval at a time (a second of a timeline), encoded and reset
// as each ends. It encodes as hdrhistogram's Encode does, byte for byte, but with a compressor
// and buffers kept from one interval to the next: hdrhistogram makes a new compressor each
// time, about a megabyte of garbage a second, which a generator that holds its collector back
// kept as resident memory for the whole of a long phase. For that it counts each value once
// more, in buckets of its own laid out as hdrhistogram's (3 significant digits from 1 µs).
type Interval struct {
	Recorder
	counts []int64
	top    int // the highest index counted since the last Reset

	payload, compressed, out bytes.Buffer
	z                        *zlib.Writer
}

// The geometry of a Recorder's histogram: 3 significant digits from 1 µs, as hdrhistogram
// lays it out (subBucketCount 2048, half of it 1024).
const (
	subBucketHalfCountMagnitude = 10
	subBucketHalfCount          = 1 << subBucketHalfCountMagnitude
	subBucketMask               = 2*subBucketHalfCount - 1
)

// countsIndex is where hdrhistogram counts v (≥ 0) in a histogram of the Recorder's geometry.
func countsIndex(v int64) int {
	bucket := 64 - bits.LeadingZeros64(uint64(v|subBucketMask)) - (subBucketHalfCountMagnitude + 1)
	sub := int(v >> uint(bucket))
	return (bucket+1)<<subBucketHalfCountMagnitude + sub - subBucketHalfCount
}

// NewInterval returns an Interval that holds values up to ceiling, as NewRecorder does.
func NewInterval(ceiling time.Duration) *Interval {
	iv := &Interval{Recorder: *NewRecorder(ceiling)}
	iv.counts = make([]int64, countsIndex(iv.h.HighestTrackableValue())+1)
	iv.z, _ = zlib.NewWriterLevel(&iv.compressed, zlib.BestCompression) // a valid level: no error
	return iv
}

// Record adds one duration.
func (iv *Interval) Record(d time.Duration) {
	us := iv.micros(d)
	_ = iv.h.RecordValue(us) // cannot fail: us is within [1, ceiling]
	i := countsIndex(us)
	iv.counts[i]++
	iv.top = max(iv.top, i)
}

// Reset forgets every value recorded.
func (iv *Interval) Reset() {
	iv.Recorder.Reset()
	clear(iv.counts[:iv.top+1])
	iv.top = 0
}

// Encode returns the values recorded in HdrHistogram's compressed V2 encoding (base64), as
// hdrhistogram's Encode(V2CompressedEncodingCookieBase) writes them; the bytes are the
// caller's.
func (iv *Interval) Encode() ([]byte, error) {
	const (
		encodingCookie           = hdrhistogram.V2EncodingCookieBase | 0x10
		compressedEncodingCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
		headerSize               = 40
	)
	var blank [headerSize]byte
	p := &iv.payload
	p.Reset()
	p.Write(blank[:]) // the header, written once the counts' length is known
	limit := countsIndex(iv.h.Max()) + 1
	for i := 0; i < limit; {
		count := iv.counts[i]
		i++
		if count == 0 {
			zeros := int64(1)
			for i < limit && iv.counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				count = -zeros
			}
		}
		writeZigZag(p, count)
	}
	header := p.Bytes()[:headerSize]
	binary.BigEndian.PutUint32(header[0:], uint32(encodingCookie))
	binary.BigEndian.PutUint32(header[4:], uint32(p.Len()-headerSize))
	binary.BigEndian.PutUint32(header[8:], 0) // the normalizing index offset
	binary.BigEndian.PutUint32(header[12:], uint32(iv.h.SignificantFigures()))
	binary.BigEndian.PutUint64(header[16:], uint64(iv.h.LowestTrackableValue()))
	binary.BigEndian.PutUint64(header[24:], uint64(iv.h.HighestTrackableValue()))
	binary.BigEndian.PutUint64(header[32:], math.Float64bits(1))

	iv.compressed.Reset()
	iv.z.Reset(&iv.compressed)
	if _, err := iv.z.Write(p.Bytes()); err != nil {
		return nil, err
	}
	if err := iv.z.Close(); err != nil {
		return nil, err
	}
	o := &iv.out
	o.Reset()
	var word [4]byte
	binary.BigEndian.PutUint32(word[:], uint32(compressedEncodingCookie))
	o.Write(word[:])
	binary.BigEndian.PutUint32(word[:], uint32(iv.compressed.Len()))
	o.Write(word[:])
	o.Write(iv.compressed.Bytes())
	enc := make([]byte, base64.StdEncoding.EncodedLen(o.Len()))
	base64.StdEncoding.Encode(enc, o.Bytes())
	return enc, nil
}

// writeZigZag writes v as hdrhistogram does: zig-zag, then LEB128 in at most 9 bytes (the
// ninth holding 8 bits).
func writeZigZag(b *bytes.Buffer, v int64) {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			b.WriteByte(byte(u))
			return
		}
		b.WriteByte(byte(u&0x7f | 0x80))
		u >>= 7
	}
	b.WriteByte(byte(u))
}
