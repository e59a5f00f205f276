package vm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/ulikunitz/xz/lzma"

	"github.com/nsperf/nsperf/internal/safefile"
)

// maxXZDict bounds the LZMA2 dictionary of a compressed module: the decoder allocates what a
// block header asks for (ulikunitz/xz takes the larger of its own and the header's), so a
// 4 KiB file claiming a 4 GiB dictionary would cost 4 GiB. The kernel compresses modules
// with --lzma2=dict=1MiB (scripts/Makefile.modinst); xz -9 uses 64 MiB.
const maxXZDict = 64 << 20

// checkXZ walks an .xz file the way the decoder will, without decoding: the stream header,
// then every block header and the LZMA2 chunks after it (each chunk states its own sizes),
// up to the index. It refuses a dictionary above maxXZDict, a filter other than LZMA2, more
// than maxModuleSize of content, and more than one stream, before the decoder allocates
// anything. The format is https://tukaani.org/xz/xz-file-format.txt.
func checkXZ(data []byte) error {
	if len(data) < 12 || !bytes.Equal(data[:6], []byte{0xfd, '7', 'z', 'X', 'Z', 0}) {
		return errors.New("no xz stream header")
	}
	if data[6] != 0 || data[7] > 0x0f || crc32.ChecksumIEEE(data[6:8]) != binary.LittleEndian.Uint32(data[8:12]) {
		return errors.New("xz stream flags are not valid")
	}
	checkSize := xzCheckSizes[data[7]]
	pos := 12
	var content int64
	for {
		if pos >= len(data) {
			return errors.New("xz stream ends before its index")
		}
		if data[pos] == 0 {
			// The index indicator: the decoder reads the index and the footer next, and
			// nothing after them (SingleStream).
			return nil
		}
		headerSize := (int(data[pos]) + 1) * 4
		if pos+headerSize > len(data) {
			return errors.New("xz block header runs past the end of the file")
		}
		dict, err := xzBlockDict(data[pos : pos+headerSize])
		if err != nil {
			return err
		}
		if dict > maxXZDict {
			return fmt.Errorf("xz block asks for a %s dictionary, more than a module needs (%s at most)", safefile.Size(dict), safefile.Size(maxXZDict))
		}
		pos += headerSize
		start := pos
		n, size, err := lzma2Chunks(data[pos:])
		if err != nil {
			return err
		}
		if content += size; content > maxModuleSize {
			return fmt.Errorf("xz content is more than %s: not a module", safefile.Size(maxModuleSize))
		}
		pos += n
		for (pos-start)%4 != 0 { // block padding
			pos++
		}
		pos += checkSize
	}
}

// xzCheckSizes are the sizes of a block's check field by check type (the spec's table).
var xzCheckSizes = [16]int{0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64}

// xzBlockDict reads a block header (its size byte first, its CRC32 last) whose only filter
// must be LZMA2, and returns the dictionary size that filter asks for.
func xzBlockDict(h []byte) (int64, error) {
	body := h[:len(h)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(h[len(h)-4:]) {
		return 0, errors.New("xz block header: CRC32 does not match")
	}
	flags := body[1]
	if flags&0x3c != 0 {
		return 0, errors.New("xz block header: reserved flags set")
	}
	r := body[2:]
	varint := func() (uint64, error) {
		v, n := binary.Uvarint(r)
		if n <= 0 || n > 9 {
			return 0, errors.New("xz block header: a size does not fit")
		}
		r = r[n:]
		return v, nil
	}
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} { // compressed, uncompressed size
		if present {
			if _, err := varint(); err != nil {
				return 0, err
			}
		}
	}
	if filters := int(flags&3) + 1; filters != 1 {
		return 0, fmt.Errorf("xz block has %d filters; a module is compressed with LZMA2 alone", filters)
	}
	id, err := varint()
	if err != nil {
		return 0, err
	}
	propSize, err := varint()
	if err != nil {
		return 0, err
	}
	if id != 0x21 || propSize != 1 || len(r) < 1 {
		return 0, fmt.Errorf("xz block filter %#x is not LZMA2; a module is compressed with LZMA2 alone", id)
	}
	dict, err := lzma.DecodeDictCap(r[0] & 0x3f)
	if err != nil || r[0]&0xc0 != 0 {
		return 0, fmt.Errorf("xz block: LZMA2 dictionary property %#x is not valid", r[0])
	}
	return dict, nil
}

// lzma2Chunks walks the LZMA2 chunks at the start of data up to the end marker and returns
// how many bytes they take, with the end marker, and the uncompressed size they state.
func lzma2Chunks(data []byte) (n int, size int64, err error) {
	for {
		if n >= len(data) {
			return 0, 0, errors.New("xz block: LZMA2 data has no end")
		}
		c := data[n]
		switch {
		case c == 0:
			return n + 1, size, nil
		case c == 1 || c == 2: // uncompressed chunk: 2 bytes of size-1
			if n+3 > len(data) {
				return 0, 0, errors.New("xz block: LZMA2 chunk header cut short")
			}
			u := int(binary.BigEndian.Uint16(data[n+1:])) + 1
			size += int64(u)
			n += 3 + u
		case c >= 0x80: // LZMA chunk: 21 bits of uncompressed size-1, 16 of compressed size-1
			header := 5
			if (c>>5)&3 >= 2 {
				header = 6 // with a properties byte
			}
			if n+header > len(data) {
				return 0, 0, errors.New("xz block: LZMA2 chunk header cut short")
			}
			u := (int(c&0x1f)<<16 | int(binary.BigEndian.Uint16(data[n+1:]))) + 1
			p := int(binary.BigEndian.Uint16(data[n+3:])) + 1
			size += int64(u)
			n += header + p
		default:
			return 0, 0, fmt.Errorf("xz block: LZMA2 control byte %#x is not valid", c)
		}
		if size > maxModuleSize {
			return 0, 0, fmt.Errorf("xz content is more than %s: not a module", safefile.Size(maxModuleSize))
		}
	}
}
