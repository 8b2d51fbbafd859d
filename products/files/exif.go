package files

import (
	"bytes"
	"encoding/binary"
)

// Orientation reads the EXIF orientation (1-8) of an image's bytes: the Orientation tag (0x0112)
// of IFD0 of the TIFF structure in a JPEG's APP1 "Exif" segment, a PNG's eXIf chunk or a WebP's
// EXIF chunk. Anything missing, malformed or out of range is 1 (as stored). It reads only the
// one tag, never allocates beyond the input, and is fuzzed (FuzzOrientation): a full EXIF
// library would bring a logging and an errors framework for one number.
func Orientation(data []byte, mime string) int {
	var tiff []byte
	switch mime {
	case "image/jpeg":
		tiff = jpegExif(data)
	case "image/png":
		tiff = pngExif(data)
	case "image/webp":
		tiff = webpExif(data)
	}
	return tiffOrientation(tiff)
}

// jpegExif finds the TIFF bytes of the first APP1 Exif segment before the image data.
func jpegExif(d []byte) []byte {
	if len(d) < 4 || d[0] != 0xFF || d[1] != 0xD8 {
		return nil
	}
	i := 2
	for i+4 <= len(d) {
		if d[i] != 0xFF {
			return nil
		}
		marker := d[i+1]
		if marker == 0xFF { // fill byte
			i++
			continue
		}
		if marker == 0xDA || marker == 0xD9 { // start of scan, end of image
			return nil
		}
		if marker >= 0xD0 && marker <= 0xD7 || marker == 0x01 { // no length
			i += 2
			continue
		}
		n := int(binary.BigEndian.Uint16(d[i+2:]))
		if n < 2 || i+2+n > len(d) {
			return nil
		}
		seg := d[i+4 : i+2+n]
		if marker == 0xE1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return seg[6:]
		}
		i += 2 + n
	}
	return nil
}

// pngExif finds the eXIf chunk before the image data.
func pngExif(d []byte) []byte {
	if !bytes.HasPrefix(d, []byte("\x89PNG\r\n\x1a\n")) {
		return nil
	}
	i := 8
	for i+8 <= len(d) {
		n := int(binary.BigEndian.Uint32(d[i:]))
		typ := string(d[i+4 : i+8])
		if n < 0 || n > len(d)-i-12 {
			return nil
		}
		switch typ {
		case "eXIf":
			return d[i+8 : i+8+n]
		case "IDAT", "IEND":
			return nil
		}
		i += 12 + n
	}
	return nil
}

// webpExif finds the EXIF chunk of a RIFF WebP file.
func webpExif(d []byte) []byte {
	if len(d) < 12 || string(d[:4]) != "RIFF" || string(d[8:12]) != "WEBP" {
		return nil
	}
	i := 12
	for i+8 <= len(d) {
		n := int(binary.LittleEndian.Uint32(d[i+4:]))
		if n < 0 || n > len(d)-i-8 {
			return nil
		}
		if string(d[i:i+4]) == "EXIF" {
			c := d[i+8 : i+8+n]
			return bytes.TrimPrefix(c, []byte("Exif\x00\x00"))
		}
		i += 8 + n + n&1
	}
	return nil
}

// tiffOrientation reads tag 0x0112 (a SHORT) of IFD0.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:]) != 42 {
		return 1
	}
	off := int64(bo.Uint32(t[4:]))
	if off < 8 || off+2 > int64(len(t)) {
		return 1
	}
	n := int64(bo.Uint16(t[off:]))
	for k := int64(0); k < n; k++ {
		e := off + 2 + 12*k
		if e+12 > int64(len(t)) {
			return 1
		}
		if bo.Uint16(t[e:]) != 0x0112 {
			continue
		}
		if bo.Uint16(t[e+2:]) != 3 || bo.Uint32(t[e+4:]) != 1 { // SHORT, one value
			return 1
		}
		if v := int(bo.Uint16(t[e+8:])); v >= 1 && v <= 8 {
			return v
		}
		return 1
	}
	return 1
}
