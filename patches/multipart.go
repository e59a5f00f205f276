package patches

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/textproto"
	"strings"
)

// maxMultipartDepth bounds how deep parts nest (multipart/alternative inside
// multipart/mixed is two): a mail's parts, not a crafted tree.
const maxMultipartDepth = 8

// multipartBody is a multipart body (`Content-Type: multipart/mixed; boundary=...`) as the
// text a reader sees: each text part (text/plain, a patch as text/x-patch or x-diff) with its
// transfer encoding undone, of multipart/alternative only the first plain text; boundary
// lines, part headers and other parts (a PDF, an HTML copy) left as empty lines, so that a
// line keeps its number where its part is not encoded (an encoded part is padded to the lines
// it took). ok is false where contentType is not multipart.
func multipartBody(contentType, body string, depth int) (string, bool) {
	media, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(media, "multipart/") || params["boundary"] == "" || depth > maxMultipartDepth {
		return "", false
	}
	delimiter := "--" + params["boundary"]
	lines := strings.Split(body, "\n")
	out := make([]string, 0, len(lines))
	var part []string // the lines of the part being read, its headers first
	inPart, taken := false, false
	flush := func() {
		if inPart {
			text := partText(part, media == "multipart/alternative" && taken, depth)
			taken = taken || strings.TrimSpace(strings.Join(text, "")) != ""
			out = append(out, text...)
		}
		part = nil
	}
	for k, l := range lines {
		t := strings.TrimRight(l, " \t\r")
		switch {
		case t == delimiter:
			flush()
			inPart = true
			out = append(out, "")
		case t == delimiter+"--":
			flush()
			inPart = false
			out = append(out, make([]string, len(lines)-k)...) // the epilogue
			return strings.Join(out, "\n"), true
		case inPart:
			part = append(part, l)
		default:
			out = append(out, "") // the preamble ("This is a multi-part message in MIME format.")
		}
	}
	flush()
	return strings.Join(out, "\n"), true
}

// partText is one part's lines as a reader sees them: its headers as empty lines, then its
// text decoded where it is text (padded to the lines it took), else empty lines. skip: an
// alternative already had its text.
func partText(part []string, skip bool, depth int) []string {
	blank := make([]string, len(part))
	head := 0
	for head < len(part) && strings.TrimRight(part[head], "\r") != "" {
		head++
	}
	if head == len(part) || skip {
		return blank
	}
	header, err := textproto.NewReader(bufio.NewReader(strings.NewReader(strings.Join(part[:head+1], "\n") + "\n"))).ReadMIMEHeader()
	if err != nil {
		return blank
	}
	raw := strings.Join(part[head+1:], "\n")
	ctype := header.Get("Content-Type")
	if ctype == "" {
		ctype = "text/plain"
	}
	if nested, ok := multipartBody(ctype, raw, depth+1); ok {
		return append(blank[:head+1], strings.Split(nested, "\n")...)
	}
	media, _, err := mime.ParseMediaType(ctype)
	if err != nil || !readableMedia(media) {
		return blank
	}
	var r io.Reader = strings.NewReader(raw)
	switch strings.ToLower(strings.TrimSpace(header.Get("Content-Transfer-Encoding"))) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, newlineStripper{r})
	default:
		return append(blank[:head+1], part[head+1:]...)
	}
	b, err := io.ReadAll(r)
	if err != nil || bytes.IndexByte(b, 0) >= 0 {
		return blank
	}
	text := strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n")
	out := append(blank[:head+1], text...)
	for len(out) < len(part) {
		out = append(out, "")
	}
	return out
}

// readableMedia: a part's type is text a reader reads, a patch attached as text among them.
func readableMedia(media string) bool {
	switch media {
	case "text/plain", "text/x-patch", "text/x-diff", "text/x-log", "application/x-patch", "application/x-diff":
		return true
	}
	return false
}
